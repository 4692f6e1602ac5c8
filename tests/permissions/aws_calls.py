"""Every AWS action the product can call, found statically in src/podplane (not the sandbox).

Only the adapters in cloud/aws send AWS calls (services reach them through the named port
methods, and import-linter keeps services away from the adapters), so what counts as a call is
the adapters' shapes around cloud/aws/caller.py:
- `<x>.call("service", "operation", ...)` and `<x>.maybe("service", "operation", ...)`;
- `self._call("operation", ...)` in an adapter module bound to one service (eks.py,
  hyperpod.py, ec2.py);
- `<x>.call("operation", ...)` on a receiver whose name mentions ec2 (the old EC2 escape hatch;
  nothing sends it now, but a call of that shape would still be counted);
- an operation passed as a variable (a loop over quota calls): every string literal of that
  module that names an operation of the service counts.
A call on a receiver named `*anonymous*` (AwsCaller.anonymous(): unsigned requests) needs no
IAM action: S3 authorizes an anonymous request by the bucket's policy alone (S3 User Guide,
"How Amazon S3 authorizes a request"), so it is not counted.
Operation names are boto3's snake_case; botocore's service model gives the API name, the
signing name gives the IAM prefix, and S3's few renamed actions come from AWS's S3 action table.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import botocore.session
from botocore import xform_name

SRC = Path(__file__).resolve().parents[2] / "src" / "podplane"
SERVICES = ("ec2", "eks", "iam", "s3", "sts", "sagemaker", "service-quotas", "eks-auth",
            "fsx", "amp")
ADAPTER_SERVICE = {"cloud/aws/eks.py": "eks", "cloud/aws/hyperpod.py": "sagemaker",
                   "cloud/aws/ec2.py": "ec2", "cloud/aws/quotas.py": "service-quotas"}
# S3 API operations whose IAM action has another name ("Actions, resources, and condition keys
# for Amazon S3", and the S3 User Guide's "Required permissions for Amazon S3 API operations").
S3_ACTIONS = {"ListObjectsV2": "ListBucket", "ListObjects": "ListBucket",
              "HeadBucket": "ListBucket", "HeadObject": "GetObject",
              "DeleteObjects": "DeleteObject", "GetBucketTagging": "GetBucketTagging",
              "PutBucketTagging": "PutBucketTagging"}


@cache
def operations(service: str) -> dict[str, str]:
    """snake_case -> API name for one botocore service."""
    model = botocore.session.get_session().get_service_model(service)
    return {xform_name(name): name for name in model.operation_names}


@cache
def iam_prefix(service: str) -> str:
    model = botocore.session.get_session().get_service_model(service)
    return str(model.signing_name)


def iam_action(service: str, snake: str) -> str:
    api = operations(service)[snake]
    if service == "s3":
        api = S3_ACTIONS.get(api, api)
    return f"{iam_prefix(service)}:{api}"


def product_files() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if "sandbox" not in p.relative_to(SRC).parts]


def calls_in(path: Path) -> set[tuple[str, str]]:
    """(service, snake_case operation) pairs one module can send."""
    rel = path.relative_to(SRC).as_posix() if path.is_relative_to(SRC) else path.name
    tree = ast.parse(path.read_text())
    literals = {n.value for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    found: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in ("call", "maybe", "_call") or not node.args:
            continue
        found |= _one_call(node, rel, literals)
    return found


def _one_call(node: ast.Call, rel: str, literals: set[str]) -> set[tuple[str, str]]:
    assert isinstance(node.func, ast.Attribute)
    if "anonymous" in ast.unparse(node.func.value).lower():
        return set()  # unsigned: no principal, no IAM action
    args = [a.value if isinstance(a, ast.Constant) else None for a in node.args[:2]]
    if len(args) == 2 and args[0] in SERVICES and isinstance(args[1], str):
        return {(args[0], args[1])}
    if args[0] in SERVICES and len(node.args) > 1:  # the operation is a variable
        return {(args[0], lit) for lit in literals if lit in operations(args[0])}
    receiver = ast.unparse(node.func.value)
    service = ADAPTER_SERVICE.get(rel) if node.func.attr == "_call" else (
        "ec2" if "ec2" in receiver.lower() else None)
    if service is None:
        return set()
    if isinstance(args[0], str):
        return {(service, args[0])} if args[0] in operations(service) else set()
    return {(service, lit) for lit in literals if lit in operations(service)}


def product_actions() -> dict[str, set[str]]:
    """IAM action -> the modules that call it."""
    out: dict[str, set[str]] = {}
    for path in product_files():
        for service, snake in calls_in(path):
            out.setdefault(iam_action(service, snake), set()).add(
                path.relative_to(SRC).as_posix())
    return out
