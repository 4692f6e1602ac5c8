"""moto, in process: the WSGI app for EC2/IAM/S3/STS/..., its persistence, reset and seed.

moto is pinned (5.2.5): persistence pickles its backend dicts, which are moto internals.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

os.environ.setdefault("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
os.environ["MOTO_DISABLE_GLOBAL_CORS"] = "true"  # no Access-Control-Allow-Origin: * (guard.py)

from moto.backends import get_backend  # noqa: E402
from moto.core.base_backend import BackendDict  # noqa: E402
from moto.moto_api._internal import mock_random  # noqa: E402
from moto.moto_server import werkzeug_app  # noqa: E402
from moto.s3.models import s3_backends  # noqa: E402
from moto.server import (  # type: ignore[attr-defined]  # noqa: E402
    DomainDispatcherApplication,
    create_backend_app,
)

PERSISTED = ("ec2", "iam", "s3", "sts", "sagemaker", "cloudformation", "logs", "kms", "ssm",
             "secretsmanager", "fsx", "elbv2", "servicequotas", "ecr")


def _instances() -> list[Any]:
    """moto's registry of backends in use (what its own reset walks)."""
    registry: list[Any] = getattr(BackendDict, "_instances")  # noqa: B009 - generic class var
    return registry


def make_app() -> Any:
    # moto reads the switch when moto.settings is first imported, which may precede this module
    werkzeug_app.DISABLE_GLOBAL_CORS = True  # type: ignore[attr-defined]
    return DomainDispatcherApplication(create_backend_app)


# regions worth keeping: ours, the global ones, and the aws partition (IAM keys it "aws");
# other partitions only hold moto's preloaded AWS-managed IAM policies (tens of MB)
KEPT_REGIONS = {"us-west-2", "us-east-1", "global", "aws"}


def save(path: Path) -> None:
    data = {}
    for name in PERSISTED:
        backend = get_backend(name)  # type: ignore[call-overload]
        if len(backend):
            data[name] = {account: {r: b for r, b in regions.items() if r in KEPT_REGIONS}
                          for account, regions in backend.items()}
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pickle.dumps(data))
    tmp.replace(path)


class UntrustedState(RuntimeError):
    """The state file is not one this user wrote: unpickling it could run anyone's code."""


def check_owned(path: Path) -> None:
    """Unpickle only a file this user owns and nobody else may write (pickle runs code)."""
    st = path.stat()
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise UntrustedState(
            f"{path} is not owned by this user or is writable by others; the sandbox will not "
            f"load it. Delete it (the sandbox starts empty) or fix its owner and mode (0600).")


def load(path: Path) -> bool:
    if not path.exists():
        return False
    check_owned(path)
    data = pickle.loads(path.read_bytes())  # noqa: S301 - checked: our own file, 0600
    for name, accounts in data.items():
        backend = get_backend(name)
        backend.clear()
        for account, regions in accounts.items():
            for region, region_backend in regions.items():
                backend[account][region] = region_backend
        if backend not in _instances():
            _instances().append(backend)
    names = _s3_bucket_names()
    names.clear()
    for account, regions in data.get("s3", {}).items():
        for partition, s3 in regions.items():
            names.update({name: (partition, account) for name in getattr(s3, "buckets", {})})
    return True


def reset(seed: int) -> None:
    """Forget every account moto holds. Backends are rebuilt lazily on next use (fast), unlike
    moto's own reset which rebuilds every region at once."""
    for backend in list(_instances()):
        backend.clear()
    _instances().clear()
    _s3_bucket_names().clear()  # moto's global bucket-name registry outlives the backends
    mock_random.seed(seed)


def _s3_bucket_names() -> dict[str, tuple[str, str]]:
    """moto's name -> (partition, account) map of every bucket (global, like S3's namespace).
    A stale entry after a reset makes the name unusable (moto recurses looking for it)."""

    names: dict[str, tuple[str, str]] = s3_backends.bucket_accounts
    return names


def bucket_owner(name: str) -> str | None:
    """The account that owns bucket `name`, or None when no account has it."""
    found = _s3_bucket_names().get(name)
    return found[1] if found else None


def seed(value: int) -> None:
    mock_random.seed(value)


def subnet_az(subnet_id: str, account: str = "123456789012",
              region: str = "us-west-2") -> str | None:
    """The AZ of a moto subnet (HyperPod places nodes in its subnets' AZs)."""
    try:
        ec2 = get_backend("ec2")[account][region]
        subnet = ec2.get_subnet(subnet_id)
        return str(subnet.availability_zone)
    except Exception:  # unknown subnet: placement falls back to any AZ
        return None


def subnet_vpc(subnet_id: str, account: str = "123456789012",
               region: str = "us-west-2") -> tuple[str, str] | None:
    """(VPC id, AZ) of a moto subnet, or None when EC2 has no such subnet."""
    try:
        subnet = get_backend("ec2")[account][region].get_subnet(subnet_id)
        return str(subnet.vpc_id), str(subnet.availability_zone)
    except Exception:  # moto raises its own InvalidSubnetIdError
        return None


def security_group_vpc(group_id: str, account: str = "123456789012",
                       region: str = "us-west-2") -> str | None:
    """The VPC of a moto security group, or None when EC2 has no such group."""
    try:
        group = get_backend("ec2")[account][region].get_security_group_from_id(group_id)
    except Exception:
        return None
    return str(group.vpc_id) if group is not None else None


def ingress_rules(group_id: str, account: str = "123456789012",
                  region: str = "us-west-2") -> list[dict[str, Any]] | None:
    """A moto security group's inbound rules as (protocol, ports, source CIDR or group), or
    None when EC2 has no such group."""
    try:
        group = get_backend("ec2")[account][region].get_security_group_from_id(group_id)
    except Exception:
        return None
    if group is None:
        return None
    return [{"protocol": r.ip_protocol, "from": r.from_port, "to": r.to_port,
             "cidr": r.ip_range.get("CidrIp"), "group": r.source_group.get("GroupId")}
            for r in group.ingress_rules]


def subnet_cidr(subnet_id: str, account: str = "123456789012",
                region: str = "us-west-2") -> str | None:
    try:
        return str(get_backend("ec2")[account][region].get_subnet(subnet_id).cidr_block)
    except Exception:
        return None


def default_security_group(vpc_id: str, account: str = "123456789012",
                           region: str = "us-west-2") -> str | None:
    """The VPC's `default` group: what FSx uses when a request names no security group."""
    try:
        group = get_backend("ec2")[account][region].get_default_security_group(vpc_id)
    except Exception:
        return None
    return str(group.id) if group is not None else None
