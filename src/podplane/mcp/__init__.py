"""The MCP face: tools that are REST calls, declared once in `tools.TOOLS`."""
