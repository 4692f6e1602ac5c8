"""Kubeflow's `ValidateV1PyTorchJob`, which the training operator runs at the top of every
reconcile (kubeflow/training-operator @ 855e096, the commit of the chart's image
`kubeflow/training-operator:v1-855e096`, the code of v1.7.0:
`pkg/apis/kubeflow.org/v1/pytorch_validation.go`, called from
`pkg/controller.v1/pytorch/pytorchjob_controller.go` `Reconcile`). A job that fails it gets a
Warning event `PyTorchJobFailedValidation` ("PyTorchJob failed validation because <err>";
`pkg/util/status.go` `NewReason`, `JobFailedValidationReason`) and nothing else: no status,
no condition, no pod. The API server accepted it: the CRD's schema has no name rule.

The rules, in the order the function checks them, the first failure only:
- the name is a DNS-1035 label (`apimachineryvalidation.NameIsDNS1035Label`, apimachinery
  v0.27.3 `pkg/util/validation/validation.go` `IsDNS1035Label`: at most 63, `[a-z]` first);
- `pytorchReplicaSpecs` is set; each replica type is Master or Worker and has containers,
  each with an image, one of them named `pytorch`; Master has at most 1 replica;
- `nprocPerNode` and the deprecated `elasticPolicy.nProcPerNode` are not both set.
Go ranges over the replica map in random order; the sandbox checks Master first.
"""

from __future__ import annotations

import re
from typing import Any

Obj = dict[str, Any]
DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1035_FORMAT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_MAX = 63
# apimachinery's dns1035LabelErrMsg with its RegexError examples
DNS1035_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or "
                   "'-', start with an alphabetic character, and end with an alphanumeric "
                   "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                   f"'{DNS1035_FORMAT}')")
REPLICA_TYPES = ("Master", "Worker")
CONTAINER = "pytorch"  # PyTorchJobDefaultContainerName
REASON = "PyTorchJobFailedValidation"


def name_errors(name: str) -> list[str]:
    """IsDNS1035Label's messages for `name` (empty when it is one)."""
    errors = []
    if len(name) > DNS1035_MAX:
        errors.append(f"must be no more than {DNS1035_MAX} characters")
    if not DNS1035.fullmatch(name):
        errors.append(DNS1035_MESSAGE)
    return errors


def refusal(job: Obj) -> str | None:
    """The event message the operator records for `job`, or None when it passes."""
    error = _error(job)
    return None if error is None else f"PyTorchJob failed validation because {error}"


def _error(job: Obj) -> str | None:
    errors = name_errors(str(job["metadata"].get("name", "")))
    if errors:
        return f"PyTorchJob name is invalid: [{' '.join(errors)}]"  # Go's %v of a []string
    spec = job.get("spec") or {}
    specs = spec.get("pytorchReplicaSpecs")
    if specs is None:
        return "PyTorchJobSpec is not valid"
    for rtype in sorted(specs, key=lambda t: (t != "Master", t)):
        error = _replica_error(rtype, specs[rtype])
        if error:
            return error
    if spec.get("nprocPerNode") is not None and \
            (spec.get("elasticPolicy") or {}).get("nProcPerNode") is not None:
        return ".spec.elasticPolicy.nProcPerNode is deprecated, use .spec.nprocPerNode instead"
    return None


def _replica_error(rtype: str, replica: Obj | None) -> str | None:
    containers = (((replica or {}).get("template") or {}).get("spec") or {}).get("containers")
    if not containers:
        return f"PyTorchJobSpec is not valid: containers definition expected in {rtype}"
    if rtype not in REPLICA_TYPES:
        return f"PyTorchReplicaType is {rtype} but must be one of [{' '.join(REPLICA_TYPES)}]"
    if any(not c.get("image") for c in containers):
        return f"PyTorchJobSpec is not valid: Image is undefined in the container of {rtype}"
    if all(c.get("name") != CONTAINER for c in containers):
        return (f"PyTorchJobSpec is not valid: There is no container named {CONTAINER} in "
                f"{rtype}")
    replicas = (replica or {}).get("replicas")
    if rtype == "Master" and replicas is not None and int(replicas) != 1:
        return "PyTorchJobSpec is not valid: There must be only 1 master replica"
    return None
