"""A created cluster's dependency units in the reconcile core's terms: what podplane wants
(desired) and what AWS and Kubernetes show now (observed).

Units: the EKS add-ons and rendered manifests of domain.dependencies, the IAM roles and Pod
Identity associations the add-ons' controllers use (services.clusters.addon_identity), and the
shared bucket's PersistentVolume and claim (domain.manifests.storage). Each add-on waits on its
association, the association on its role, the volume on the CSI driver, so a drifted unit
names everything that depends on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass

from podplane.cloud.ports_kube import KubePort, Manifest
from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS, CSI_IDENTITY, PodIdentity, Unit, as_desired
from podplane.domain.manifests.common import MANAGED_LABEL
from podplane.domain.reconcile import Desired, Observed
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.addon_identity import addon_role_name
from podplane.services.clusters.dependencies import FAILED, default_versions, region_of
from podplane.services.clusters.network import MANAGED_TAG

ROLE_KIND = "iam-role"
ASSOCIATION_KIND = "pod-identity-association"
STORAGE_KIND = "storage"
INLINE_POLICY = "podplane"   # the inline policy name identity.ensure_role writes
AS_RENDERED = "as rendered"  # a manifest unit's objects all exist with the rendered images
STORAGE_UNIT = "s3-volume"
CSI_ADDON = "aws-mountpoint-s3-csi-driver"


@dataclass(frozen=True)
class Context:
    """What a cluster's units depend on: its EKS name and (created clusters) its bucket."""

    eks_name: str
    region: str
    bucket: str | None


def role_key(identity: PodIdentity) -> str:
    return f"{ROLE_KIND}/{identity.role}"


def association_key(identity: PodIdentity) -> str:
    return f"{ASSOCIATION_KIND}/{identity.namespace}/{identity.service_account}"


def identities() -> list[PodIdentity]:
    return [u.identity for u in CORE_UNITS if u.identity is not None]


def desired_units(ctx: Context, versions: dict[str, str]) -> list[Desired]:
    """Every unit, add-ons and manifests first (as the create path declares them)."""
    out = []
    for unit in as_desired(CORE_UNITS, versions):
        identity = _by_name(unit.key).identity
        if identity is not None:  # an add-on's pods get credentials only via its association
            unit = Desired(unit.key, unit.kind, unit.fields, unit.after
                           + (association_key(identity),), adopt=True)
        if unit.kind == "manifest":
            unit = Desired(unit.key, unit.kind, {**unit.fields, "objects": AS_RENDERED},
                           unit.after, adopt=True)
        out.append(unit)
    for identity in identities():
        out.append(Desired(role_key(identity), ROLE_KIND, _role_fields(ctx, identity),
                           adopt=True))
        out.append(Desired(association_key(identity), ASSOCIATION_KIND, {"exists": True},
                           (role_key(identity), "eks-pod-identity-agent"), adopt=True))
    if ctx.bucket:
        out.append(Desired(f"{STORAGE_KIND}/{STORAGE_UNIT}", STORAGE_KIND,
                           {"objects": AS_RENDERED}, (CSI_ADDON,), adopt=True))
    return out


def _by_name(name: str) -> Unit:
    return next(u for u in CORE_UNITS if u.name == name)


def _role_fields(ctx: Context, identity: PodIdentity) -> dict[str, str | int | bool | None]:
    fields: dict[str, str | int | bool | None] = {"exists": True}
    fields.update({f"attached {arn}": True for arn in identity.managed_policies})
    if identity == CSI_IDENTITY and ctx.bucket:
        fields[f"inline {INLINE_POLICY}"] = True
    return fields


async def desired_for(cloud: Cloud, ctx: Context) -> list[Desired]:
    return desired_units(ctx, await default_versions(cloud))


async def observe_units(cloud: Cloud, ctx: Context, desired: list[Desired],
                        kube: KubePort | None = None) -> dict[str, Observed]:
    """What each desired unit looks like now (absent units are left out). The reads are
    independent, so they go out together: a status read waits for the slowest, not the sum."""
    kube = kube or await cloud.kube_for(ctx.eks_name)
    reads: list[Awaitable[Observed | None]] = []
    for unit in desired:
        if unit.kind == "manifest":
            reads.append(_objects(kube, unit, manifests.for_unit(
                unit.key, str(unit.fields.get("version") or "0"), region_of(cloud))))
        elif unit.kind == STORAGE_KIND and ctx.bucket:
            reads.append(_objects(kube, unit, manifests.s3_volume(ctx.bucket, ctx.region)))
        elif unit.kind == ROLE_KIND:
            reads.append(_role(cloud, ctx, unit))
    addons, associations, others = await asyncio.gather(
        _addons(cloud, ctx.eks_name, [d for d in desired if d.kind == "eks-addon"]),
        _associations(cloud, ctx.eks_name, desired), _all(reads))
    seen = [*addons, *associations, *others]
    return {o.key: o for o in seen if o is not None}


async def _all(reads: list[Awaitable[Observed | None]]) -> list[Observed | None]:
    return list(await asyncio.gather(*reads))


async def _addons(cloud: Cloud, eks_name: str, units: list[Desired]) -> list[Observed]:
    installed = set(await cloud.aws.eks.list_addons(eks_name))
    present = [u for u in units if u.key in installed]
    found = await asyncio.gather(*(cloud.aws.eks.describe_addon(eks_name, u.key)
                                   for u in present))
    # `status` is not desired (so not compared): the status page shows it
    return [Observed(u.key, u.kind, {"version": a.get("addonVersion"), "status": a.get("status")},
                     owned=(a.get("tags") or {}).get(MANAGED_TAG) == "true",
                     healthy=a.get("status") not in FAILED)
            for u, a in zip(present, (f or {} for f in found), strict=True)]


async def _objects(kube: KubePort, unit: Desired, rendered: list[Manifest]) -> Observed | None:
    """A manifest unit: present when its last object is (as the create path reads it); its
    objects are `as rendered` when each exists and runs the rendered images."""
    found = await asyncio.gather(*(kube.get(o["apiVersion"], o["kind"], o["metadata"]["name"],
                                            o["metadata"].get("namespace")) for o in rendered))
    last = found[-1]
    if last is None:
        return None
    problem = next((_departure(want, have) for want, have in zip(rendered, found, strict=True)
                    if _departure(want, have)), None)
    meta = last["metadata"]
    return Observed(unit.key, unit.kind,
                    {"version": (meta.get("annotations") or {}).get(manifests.VERSION_ANNOTATION),
                     "objects": problem or AS_RENDERED},
                    owned=(meta.get("labels") or {}).get(MANAGED_LABEL) == "podplane")


def _departure(want: Manifest, have: Manifest | None) -> str | None:
    """How one object departs from its rendering: missing, or a container image changed
    (what `kubectl set image` or an edit of a workload changes)."""
    where = f"{want['kind']} {want['metadata'].get('namespace', '')}/{want['metadata']['name']}"
    if have is None:
        return f"{where} is missing"
    for name, image in _images(want).items():
        if _images(have).get(name) != image:
            return f"{where} container {name} runs {_images(have).get(name)}, not {image}"
    return None


def _images(obj: Manifest) -> dict[str, str]:
    pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return {c["name"]: c.get("image", "") for c in pod.get("containers") or []}


async def _role(cloud: Cloud, ctx: Context, unit: Desired) -> Observed | None:
    identity = next(i for i in identities() if role_key(i) == unit.key)
    name = addon_role_name(ctx.eks_name, identity.role, ctx.region)
    found = await cloud.aws.iam.get_role(name)
    if found is None:
        return None
    policies, names = await asyncio.gather(cloud.aws.iam.list_attached_role_policies(name),
                                           cloud.aws.iam.list_role_policies(name))
    attached = {p["PolicyArn"] for p in policies}
    inline = set(names)
    fields: dict[str, str | int | bool | None] = {"exists": True}
    for field in unit.fields:
        kind, _, ref = field.partition(" ")
        if kind == "attached":
            fields[field] = ref in attached
        elif kind == "inline":
            fields[field] = ref in inline
    tags = {t["Key"]: t["Value"] for t in found.get("Tags") or []}
    return Observed(unit.key, unit.kind, fields, owned=tags.get(MANAGED_TAG) == "true")


async def _associations(cloud: Cloud, eks_name: str,
                        desired: list[Desired]) -> list[Observed]:
    wanted = {d.key for d in desired if d.kind == ASSOCIATION_KIND}
    out: list[Observed] = []
    for found in await cloud.aws.eks.list_pod_identity_associations(eks_name):
        key = f"{ASSOCIATION_KIND}/{found.get('namespace')}/{found.get('serviceAccount')}"
        if key in wanted:
            out.append(Observed(key, ASSOCIATION_KIND, {"exists": True}))
    return out
