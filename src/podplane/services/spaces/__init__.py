"""Dev spaces (issue 37): a JupyterLab on the cluster with its home volume and the bucket."""
