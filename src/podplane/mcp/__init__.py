"""The MCP face: tools are REST calls; annotations derive from service effects."""
