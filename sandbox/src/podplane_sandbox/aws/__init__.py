"""The sandbox's AWS endpoint: our EKS / HyperPod / Service Quotas emulators in front of moto."""
