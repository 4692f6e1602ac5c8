"""Cloud ports (typing.Protocol) and their real adapters: AWS (boto3) and Kubernetes."""
