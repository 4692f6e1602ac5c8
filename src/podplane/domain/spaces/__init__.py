"""Dev spaces: a JupyterLab on the cluster next to the data jobs use (issue 37)."""
