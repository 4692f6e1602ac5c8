"""The inference operator feature's cloud side: the cluster's OIDC issuer, the IAM OIDC provider
(observed, created, deleted), and the check before enabling (domain/features/
inference_operator.py has the sources)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podplane.domain.errors import Conflict
from podplane.domain.features import inference_operator as io
from podplane.domain.features.model import FEATURE_TAG, Resource, Seen
from podplane.domain.reconcile import Verb

if TYPE_CHECKING:
    from podplane.services.features.live import Live

Shape = dict[str, Any]


async def found(live: Live) -> Shape:
    """What the resources name that only the cloud knows: the EKS cluster's OIDC issuer."""
    cluster = await live.cloud.aws.eks.describe_cluster(live.eks) or {}
    return {"issuer": ((cluster.get("identity") or {}).get("oidc") or {}).get("issuer", "")}


async def _provider_arn(live: Live, url: str) -> str | None:
    path = io.provider_path(url)
    for provider in await live.cloud.aws.iam.list_open_id_connect_providers():
        if str(provider.get("Arn", "")).endswith(f":oidc-provider/{path}"):
            return str(provider["Arn"])
    return None


async def provider_seen(live: Live, res: Resource) -> Seen:
    """Ours only with the feature's tag: a provider someone registered is used, never touched."""
    iam = live.cloud.aws.iam
    arn = await _provider_arn(live, res.desired["url"])
    described = await iam.get_open_id_connect_provider(arn) if arn else None
    if described is None:
        return Seen(None)
    tags = {t["Key"]: t["Value"] for t in described.get("Tags") or []}
    live_shape = {"url": res.desired["url"],
                  "clientIds": list(described.get("ClientIDList") or []), "tags": tags}
    return Seen(live_shape, owned=tags.get(FEATURE_TAG) == res.feature)


async def provider_change(live: Live, verb: Verb, res: Resource) -> None:
    iam = live.cloud.aws.iam
    arn = await _provider_arn(live, res.desired["url"])
    if verb == "delete":
        if arn is not None:
            await iam.delete_open_id_connect_provider(arn)
        return
    if arn is None:   # an update (client ids) is left to a person: the plan shows it
        await iam.create_open_id_connect_provider(
            res.desired["url"], list(res.desired["clientIds"]),
            [{"Key": k, "Value": v} for k, v in res.desired["tags"].items()])


async def check(live: Live) -> None:
    """The operator's init container refuses to start without both CSI drivers (chart
    config/manager/manager.yaml); the S3 one is a core dependency, the FSx one is not."""
    for addon in (io.S3_CSI_ADDON, io.FSX_CSI_ADDON):
        present = await live.cloud.aws.eks.describe_addon(live.eks, addon)
        if present is None or present.get("status") == "DELETING":
            raise Conflict(f"The inference operator needs the {addon} add-on, which this "
                           "cluster does not have.",
                           hint="Enable fsx-lustre (it installs the FSx CSI driver) or install "
                           f"the {addon} EKS add-on, then enable the inference operator.")
