"""FSx for Lustre storage: observing and changing its file system, its security group rules
and its PersistentVolume (domain/features/fsx.py says what they are).

FSx API: CreateFileSystem answers CREATING; the file system serves clients once AVAILABLE
(FAILED carries `FailureDetails.Message`); DeleteFileSystem answers DELETING and
DescribeFileSystems stops listing it when done (FileSystemNotFound for its id). EC2:
AuthorizeSecurityGroupIngress takes tags for the rules it adds (TagSpecifications,
`security-group-rule`); DescribeSecurityGroupRules lists them with their ids and tags.
Kubernetes: a PV's volume source is immutable, so a PV that must point at another file system
is deleted (with its claim) and made again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podplane.domain.errors import CloudError, Conflict, InvalidInput, NotFound
from podplane.domain.features import fsx
from podplane.domain.features.model import FEATURE_TAG, Resource, Seen
from podplane.domain.features.render import ClusterFacts
from podplane.domain.features.render import kube as kube_objects
from podplane.domain.jobs.kinds import NAMESPACE as JOBS_NAMESPACE
from podplane.domain.reconcile import Verb
from podplane.ops.context import StepContext

if TYPE_CHECKING:   # live.py reads FSx resources through this module
    from podplane.services.features.live import Live

Shape = dict[str, Any]
POLL_SECONDS = 30.0
DEADLINE_SECONDS = 60 * 60.0   # PERSISTENT_2 creation takes minutes, large ones longer
RESIZE_DEADLINE = 24 * 3600.0   # optimizing rebalances the data: hours on large systems
RESIZE_POLL_SECONDS = 60.0
SERVING = ("AVAILABLE", "UPDATING")
GONE = ("DELETING",)


# -- observing ---------------------------------------------------------------------------------
async def own_file_system(live: Live, cluster: str, deleting: bool = False) -> Shape | None:
    """The file system podplane made for this cluster (by its tags); one being deleted only
    when `deleting`."""
    for fs in await live.file_systems():
        if fsx.ours(fs, cluster) and (deleting or fs.get("Lifecycle") not in GONE):
            return fs
    return None


async def found(live: Live, settings: Shape, cluster: str) -> Shape | None:
    """The file system the PV should mount: the existing one named, or podplane's own; with
    the request of the claim when it exists (fsx.CLAIMED_GIB)."""
    existing = settings.get("file_system_id")
    if existing:
        fs = await live.cloud.aws.fsx.describe_file_system(existing)
        fs = fs if fs and fs.get("Lifecycle") not in GONE else None
    else:
        fs = await own_file_system(live, cluster)
    claimed = await _claimed_gib(live)
    if claimed is None:
        return fs
    return {**(fs or {}), fsx.CLAIMED_GIB: claimed}


async def _claimed_gib(live: Live) -> int | None:
    """What the claim asked for when it was made. Kubernetes changes a bound claim's request
    only by volume expansion, which needs a StorageClass that allows it (Kubernetes docs,
    "Expanding Persistent Volumes Claims"); the static claim has none, so after a resize the
    PV grows and the claim keeps its request (a claim binds a PV at least that large)."""
    try:
        claim = await (await live.kube()).get("v1", "PersistentVolumeClaim", fsx.CLAIM,
                                              JOBS_NAMESPACE)
    except NotFound:
        return None
    request = (((claim or {}).get("spec") or {}).get("resources") or {}).get(
        "requests", {}).get("storage")
    text = str(request or "")
    return int(text.removesuffix("Gi")) if text.removesuffix("Gi").isdigit() else None


async def file_system_seen(live: Live, res: Resource, cluster: str) -> Seen:
    want = res.desired
    if "FileSystemId" in want:   # an existing one: podplane's only if tagged for this cluster
        fs = await live.cloud.aws.fsx.describe_file_system(want["FileSystemId"])
        if fs is None or fs.get("Lifecycle") in GONE:
            return Seen(None)
        return Seen({"FileSystemId": fs["FileSystemId"], "FileSystemType":
                     fs.get("FileSystemType")}, owned=fsx.ours(fs, cluster))
    fs = await own_file_system(live, cluster)
    if fs is None:
        return Seen(None)
    lustre = fs.get("LustreConfiguration") or {}
    tags = {t["Key"]: t["Value"] for t in fs.get("Tags") or []}
    capacity: Any = fs.get("StorageCapacity")
    target = resize_target(fs)
    if target is not None:   # not settled until FSx has optimized: a resumed step follows it
        capacity = f"{capacity} GiB, resizing to {target}"
    return Seen({"FileSystemId": fs["FileSystemId"], "FileSystemType": fs.get("FileSystemType"),
                 "StorageCapacity": capacity, "SubnetIds": fs.get("SubnetIds"),
                 "LustreConfiguration": {
                     "DeploymentType": lustre.get("DeploymentType"),
                     "PerUnitStorageThroughput": lustre.get("PerUnitStorageThroughput")},
                 "Tags": {k: tags.get(k) for k in want["Tags"]}}, owned=True)


async def rule_seen(live: Live, res: Resource) -> Seen:
    """The inbound rule with these ports from this source; podplane's when tagged so (a
    matching rule someone else added is reported and left alone, never revoked)."""
    want = res.desired
    if not want["groupId"]:   # a cluster without VpcConfig: nothing to look at (enable refuses)
        return Seen(None)
    answer = await live.cloud.aws.ec2.describe_security_group_rules(
        Filters=[{"Name": "group-id", "Values": [want["groupId"]]}])
    matches = []
    for rule in answer.get("SecurityGroupRules") or []:
        source = (rule.get("ReferencedGroupInfo") or {}).get("GroupId")
        if not rule.get("IsEgress") and (rule.get("IpProtocol"), rule.get("FromPort"),
                                         rule.get("ToPort"), source) == (
                want["protocol"], want["from"], want["to"], want["source"]):
            tags = {t["Key"]: t["Value"] for t in rule.get("Tags") or []}
            matches.append((tags.get(FEATURE_TAG) == res.feature, rule, tags))
    if not matches:
        return Seen(None)
    owned, rule, tags = max(matches, key=lambda m: m[0])
    mark = tags.get(FEATURE_TAG)
    return Seen({**{k: want[k] for k in ("groupId", "protocol", "from", "to", "source")},
                 "tags": {FEATURE_TAG: mark} if mark else {},
                 "ruleId": rule["SecurityGroupRuleId"]}, owned=owned)


# -- checks before a change ----------------------------------------------------------------------
async def check(live: Live, settings: Shape, facts: ClusterFacts) -> None:
    """Refused before any change: no network to place it in, an existing file system that
    is not a usable Lustre one in the cluster's VPC, or a change FSx would not make."""
    if not facts.subnet or not facts.security_group:
        raise Conflict("The HyperPod cluster's VpcConfig names no subnet or security group "
                       "to place the file system in.")
    mine = await own_file_system(live, facts.name)
    existing = settings.get("file_system_id")
    if existing:
        if mine is not None:
            raise Conflict(f"podplane's file system {mine['FileSystemId']} still exists.",
                           hint="Disable fsx-lustre (deletes it), then enable it with "
                                "file_system_id.")
        await _check_existing(live, existing, facts)
        return
    if mine is not None:
        _check_resize(mine, settings)


def _check_resize(mine: Shape, settings: Shape) -> None:
    """FSx for Lustre storage only grows, one update at a time; throughput stays as made
    (FSx Lustre User Guide, "Managing storage capacity"; botocore `fsx` UpdateFileSystem)."""
    fs_id = mine["FileSystemId"]
    lustre = mine.get("LustreConfiguration") or {}
    throughput = lustre.get("PerUnitStorageThroughput")
    if throughput != settings["throughput_per_tib"]:
        raise Conflict(f"The file system {fs_id} runs at {throughput} MB/s/TiB; podplane "
                       "does not change its throughput.",
                       hint=f"Keep throughput_per_tib {throughput}, or disable (deletes it) "
                            "and enable again.")
    now, want = int(mine.get("StorageCapacity") or 0), settings["capacity_gib"]
    pending = resize_target(mine)
    if want < now:
        raise Conflict(f"The file system {fs_id} has {now} GiB; FSx for Lustre cannot "
                       f"decrease storage capacity, so {want} GiB is refused.",
                       hint=f"Keep capacity_gib at {now} or more (a multiple of "
                            f"{fsx.CAPACITY_STEP} GiB).")
    if pending is not None and want not in (now, pending):
        raise Conflict(f"The file system {fs_id} is being resized to {pending} GiB; FSx "
                       "takes one storage update at a time.",
                       hint="Wait for that resize to finish (the feature's operation shows "
                            "its progress), then ask again.")


def resize_target(fs: Shape) -> int | None:
    """The capacity of a storage increase still in progress (its FILE_SYSTEM_UPDATE not yet
    COMPLETED), from DescribeFileSystems AdministrativeActions."""
    for action in fs.get("AdministrativeActions") or []:
        if action.get("AdministrativeActionType") == "FILE_SYSTEM_UPDATE" and \
                action.get("Status") not in ("COMPLETED", "FAILED", "CANCELLED"):
            target = (action.get("TargetFileSystemValues") or {}).get("StorageCapacity")
            if target is not None:
                return int(target)
    return None


async def _check_existing(live: Live, fs_id: str, facts: ClusterFacts) -> None:
    fs = await live.cloud.aws.fsx.describe_file_system(fs_id)
    if fs is None or fs.get("FileSystemType") != "LUSTRE":
        raise InvalidInput(f"No FSx for Lustre file system {fs_id} in this account and "
                           "region.", field="file_system_id")
    if fs.get("Lifecycle") not in SERVING:
        raise InvalidInput(f"The file system {fs_id} is {fs.get('Lifecycle')}, not AVAILABLE.",
                           field="file_system_id")
    subnets = (await live.cloud.aws.ec2.describe_subnets(SubnetIds=[facts.subnet]))["Subnets"]
    vpc = subnets[0]["VpcId"] if subnets else None
    if fs.get("VpcId") != vpc:
        raise InvalidInput(f"The file system {fs_id} is in {fs.get('VpcId')}; the cluster's "
                           f"nodes are in {vpc}.", field="file_system_id",
                           hint="Mount a file system in the cluster's VPC.")


# -- changing ----------------------------------------------------------------------------------
async def file_system_change(ctx: StepContext, live: Live, facts: ClusterFacts, verb: Verb,
                             res: Resource) -> None:
    port = live.cloud.aws.fsx
    if "FileSystemId" in res.desired:
        if verb == "create":   # never ours to make: it was deleted after it was named
            raise CloudError(f"The file system {res.desired['FileSystemId']} no longer "
                             "exists.", code="file_system_missing", retryable=False,
                             hint="Name another file_system_id, or leave it empty.")
        return   # podplane never changes or deletes a file system it did not make
    mine = await own_file_system(live, facts.name)
    if verb == "update":
        await resize(ctx, live, facts.name, res, mine)
        return
    if verb == "delete":
        if mine is not None:
            await port.delete_file_system(mine["FileSystemId"],
                                          client_token=ctx.client_token(res.key + " delete"))
        await _wait(ctx, live, facts.name, lambda fs: fs is None, deleting=True)
        return
    if mine is None:
        await port.create_file_system(client_token=ctx.client_token(res.key),
                                      **fsx.create_request(res, facts.security_group))
    fs = await _wait(ctx, live, facts.name,
                     lambda f: f is not None and f.get("Lifecycle") in ("AVAILABLE", "FAILED"))
    if fs is not None and fs.get("Lifecycle") == "FAILED":
        why = (fs.get("FailureDetails") or {}).get("Message", "no details")
        raise CloudError(f"FSx could not create the file system: {why}.",
                         code="file_system_failed", retryable=False,
                         hint="Fix what FSx names, disable fsx-lustre, then enable it again.")


async def resize(ctx: StepContext, live: Live, cluster: str, res: Resource,
                 mine: Shape | None) -> None:
    """Grow podplane's file system to the desired capacity (UpdateFileSystem
    StorageCapacity) and follow it until FSx has finished optimizing; an increase already in
    progress to that capacity (a resumed step) is followed, not asked for again."""
    want = int(res.desired["StorageCapacity"])
    if mine is None:
        raise CloudError("podplane's file system is gone.", code="file_system_missing",
                         retryable=True, hint="Retry the step: it makes it again.")
    fs_id, now = mine["FileSystemId"], int(mine.get("StorageCapacity") or 0)
    pending = resize_target(mine)
    if want <= now and pending is None:
        raise CloudError("podplane's file system differs from its settings in what FSx does "
                         "not change in place (throughput, subnet or deployment type).",
                         code="file_system_changed", retryable=False,
                         hint="Disable and enable again, or change it with FSx directly.")
    if pending != want and want > now:
        await ctx.phase(f"resizing {fs_id} to {want} GiB")   # before the call: see phase()
        await live.cloud.aws.fsx.update_storage_capacity(
            fs_id, want, client_token=ctx.client_token(f"{res.key} resize {want}"))
    await _follow_resize(ctx, live, cluster, want)


async def _follow_resize(ctx: StepContext, live: Live, cluster: str, want: int) -> None:
    """FILE_SYSTEM_UPDATE, then STORAGE_OPTIMIZATION with ProgressPercent, until COMPLETED
    (botocore `fsx` AdministrativeActionType); each change of progress is noted."""
    said = ""
    for _ in range(int(RESIZE_DEADLINE / RESIZE_POLL_SECONDS)):
        live.forget()
        fs = await own_file_system(live, cluster) or {}
        actions = {a.get("AdministrativeActionType"): a
                   for a in fs.get("AdministrativeActions") or []}
        update = actions.get("FILE_SYSTEM_UPDATE") or {}
        if update.get("Status") == "FAILED":
            why = (update.get("FailureDetails") or {}).get("Message", "no details")
            raise CloudError(f"FSx could not resize the file system: {why}.",
                             code="file_system_resize_failed", retryable=False)
        if fs.get("StorageCapacity") == want and update.get("Status") in (None, "COMPLETED"):
            await ctx.note(f"resized to {want} GiB", progress=100)
            return
        optimizing = actions.get("STORAGE_OPTIMIZATION") or {}
        tens = int(optimizing.get("ProgressPercent") or 0) // 10 * 10   # a note per 10 %
        now = (f"storage optimization {tens}%" if optimizing
               else f"adding storage ({update.get('Status', 'PENDING')})")
        if now != said:
            said = now
            await ctx.note(f"resizing to {want} GiB: {now}",
                           progress=optimizing.get("ProgressPercent", 0))
        await ctx.sleep(RESIZE_POLL_SECONDS)
    raise CloudError(f"The resize to {want} GiB did not finish in "
                     f"{RESIZE_DEADLINE / 3600:.0f} hours.", code="file_system_timeout",
                     retryable=True, hint="Retry the step: it follows the same resize.")


async def _wait(ctx: StepContext, live: Live, cluster: str,
                done: Callable[[Shape | None], bool], deleting: bool = False) -> Shape | None:
    for _ in range(int(DEADLINE_SECONDS / POLL_SECONDS)):
        live.forget()
        fs = await own_file_system(live, cluster, deleting)
        if done(fs):
            return fs
        await ctx.sleep(POLL_SECONDS)
    raise CloudError("The FSx file system did not settle in "
                     f"{DEADLINE_SECONDS / 60:.0f} minutes.", code="file_system_timeout",
                     retryable=True)


async def rule_change(live: Live, verb: Verb, res: Resource) -> None:
    ec2 = live.cloud.aws.ec2
    want = res.desired
    seen = await rule_seen(live, res)
    if verb == "delete":
        if seen.live is not None and seen.owned:
            await ec2.revoke_security_group_ingress(GroupId=want["groupId"],
                                                    SecurityGroupRuleIds=[seen.live["ruleId"]])
        return
    if seen.live is not None:
        return   # the same rule exists (someone else's is left as it is)
    await ec2.authorize_security_group_ingress(
        GroupId=want["groupId"],
        IpPermissions=[{"IpProtocol": want["protocol"], "FromPort": want["from"],
                        "ToPort": want["to"], "UserIdGroupPairs": [{"GroupId": want["source"]}]}],
        TagSpecifications=[{"ResourceType": "security-group-rule", "Tags": [
            {"Key": k, "Value": v} for k, v in want["tags"].items()]}])


async def volume_change(live: Live, verb: Verb, res: Resource) -> bool:
    """The PV and claim cases a plain apply cannot do; True when handled here. A PV whose
    source must change (a re-made file system) is immutable there; a claim made again while
    the Retain PV still names the old one would stay Pending (the PV is Released): both go,
    then both are made again (Kubernetes docs, Persistent Volumes: Retain, immutable source)."""
    kind = res.desired["kind"]
    if res.feature != fsx.NAME or verb == "delete" or kind not in (
            "PersistentVolume", "PersistentVolumeClaim"):
        return False
    kube = await live.kube()
    pv = await kube.get("v1", "PersistentVolume", fsx.PV_NAME)
    if pv is None:
        return False
    if kind == "PersistentVolume":
        stale = _source_of(pv) != _source_of(res.desired)
    else:
        stale = verb == "create" and bool((pv.get("spec") or {}).get("claimRef"))
    if not stale:
        return False
    storage = (pv.get("spec") or {}).get("capacity", {}).get("storage", "1200Gi")
    volume = res.desired if kind == "PersistentVolume" else _desired_volume(pv)
    claim = kube_objects(fsx.NAME, [fsx.claim(int(str(storage).removesuffix("Gi")))], True)
    await kube.delete("v1", "PersistentVolumeClaim", fsx.CLAIM, namespace=JOBS_NAMESPACE)
    await kube.delete("v1", "PersistentVolume", fsx.PV_NAME)
    await kube.apply(volume, force=True)
    await kube.apply(claim[0].desired, force=True)
    return True


def _source_of(pv: Shape) -> tuple[Any, ...]:
    csi = (pv.get("spec") or {}).get("csi") or {}
    attrs = csi.get("volumeAttributes") or {}
    return csi.get("volumeHandle"), attrs.get("dnsname"), attrs.get("mountname")


def _desired_volume(pv: Shape) -> Shape:
    """The live PV without what the API server and binder added (made again unbound)."""
    meta = {k: v for k, v in pv["metadata"].items() if k in ("name", "labels")}
    spec = {k: v for k, v in pv["spec"].items() if k != "claimRef"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}
