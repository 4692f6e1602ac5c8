"""The job kinds podplane runs: where they live in the Kubernetes API and how their pods are
found. Sources: HyperPodPyTorchJob, ../shared/crds/hyperpod-training/FIELDS.md (group, version,
plural; pods labelled `HPJob=<job>` as the HyperPod CLI lists them, sagemaker-hyperpod
`HyperPodPytorchJob.list_pods`); PyTorchJob, kubeflow/training-operator
(`kubeflow.org_pytorchjobs.yaml`; pods labelled `training.kubeflow.org/job-name`,
pkg/controller.v1/common/util.go `GenLabels`); RayJob, ray-project/kuberay (`ray.io_rayjobs.yaml`;
its submitter pods labelled `ray.io/originated-from-cr-name`, its head and workers
`ray.io/cluster=<status.rayClusterName>`: domain/jobs/ray.py)."""

from __future__ import annotations

from dataclasses import dataclass

NAMESPACE = "default"
MANAGED_BY = "app.kubernetes.io/managed-by"
RECIPE_LABEL = "podplane.io/recipe"
GROUP_LABEL = "sagemaker.amazonaws.com/instance-group-name"
HEALTH_LABEL = "sagemaker.amazonaws.com/node-health-status"
# The operators' own suspension switch (runPolicy.suspend): cancel = suspend, pods deleted,
# the job kept with its status and logs' owner for inspection.
SUSPEND_FIELD = "suspend"


@dataclass(frozen=True)
class Kind:
    kind: str
    api_version: str
    pod_label: str  # label key whose value is the job's name on every pod

    def selector(self, job: str) -> dict[str, str]:
        return {self.pod_label: job}


HYPERPOD = Kind("HyperPodPyTorchJob", "sagemaker.amazonaws.com/v1", "HPJob")
KUBEFLOW = Kind("PyTorchJob", "kubeflow.org/v1", "training.kubeflow.org/job-name")
RAY = Kind("RayJob", "ray.io/v1", "ray.io/originated-from-cr-name")
KINDS = {k.kind: k for k in (HYPERPOD, KUBEFLOW, RAY)}
