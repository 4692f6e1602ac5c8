"""Dev spaces as a feature (issue 37): what switching it on creates, in which order, and what
switching it off deletes, pure (the plan rendered against what a cluster would show), then
once end to end against the sandbox's add-ons.

On: the EBS CSI driver's role, association and add-on, the default gp3 class for home volumes,
the Spaces controller's role and association and the Spaces add-on, then the three shared
claims as Mountpoint for S3 static volumes of the cluster bucket's prefixes. Off: the reverse,
and it is a destroy (admin + confirm, ADR 0016): removing the Spaces add-on removes every space
with its home volume. An EBS driver someone else installed gets no role or association and is
left alone."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from podplane.domain.effects import Role
from podplane.domain.errors import ConfirmationRequired, Forbidden
from podplane.domain.features import catalog as cat
from podplane.domain.features import spaces as sp
from podplane.domain.features.inference_operator import S3_CSI_ADDON
from podplane.domain.features.model import FEATURE_TAG, Resource, Seen, plan
from podplane.domain.features.render import ClusterFacts, resources
from podplane.domain.manifests.storage import s3_volume
from podplane.domain.principal import Principal
from podplane.services.features import spaces as spaces_service
from podplane.services.features.service import _escalate_a_destroy
from tests.features.conftest import BASE, addon_of, mutations, same_again_changes_nothing
from tests.groups.conftest import CLUSTER, Cluster, finish

FACTS = ClusterFacts("gpu", "gpu-hp", "gpu-eks", "111122223333", "us-west-2", "podplane-gpu",
                     "arn:aws:sagemaker:us-west-2:111122223333:cluster/abc123def456")
EKS_ARN = "arn:aws:eks:us-west-2:111122223333:cluster/gpu-eks"
ROLE = f"iam role {FACTS.role_name(sp.EBS_ROLE_PURPOSE)}"
ASSOCIATION = "pod identity kube-system/ebs-csi-controller-sa"
CONTROLLER_ROLE = f"iam role {FACTS.role_name(sp.CONTROLLER_ROLE_PURPOSE)}"
CONTROLLER = "pod identity jupyter-k8s-system/jupyter-k8s-controller-manager"
CLASS = "kube storage.k8s.io/v1 StorageClass space-home"
EBS, SPACES = "eks addon aws-ebs-csi-driver", "eks addon amazon-sagemaker-spaces"
VOLUMES = [key for claim in ("space-data", "space-models", "space-outputs")
           for key in (f"kube v1 PersistentVolume {claim}-pv",
                       f"kube v1 PersistentVolumeClaim default/{claim}")]


def _render(on: bool, found: dict[str, Any] | None = None) -> list[Resource]:
    return resources(sp.NAME, on, {}, FACTS, found)


def _running() -> dict[str, Seen]:
    """What a cluster shows when the feature is on exactly as rendered (made by podplane)."""
    return {r.key: Seen(dict(r.desired), True) for r in _render(True)}


def _by_key(found: list[Resource]) -> dict[str, Resource]:
    return {r.key: r for r in found}


def test_the_contract_names() -> None:
    """The names the spaces capability (services/spaces) and the sandbox agree on."""
    assert (sp.NAME, sp.ADDON, sp.NAMESPACE) == ("spaces", "amazon-sagemaker-spaces", "default")
    assert sp.SHARED_CLAIMS == {"/data": "space-data", "/models": "space-models",
                                "/outputs": "space-outputs"}
    assert sp.PREFIXES == {"space-data": "data/", "space-models": "models/",
                           "space-outputs": "outputs/"}
    assert sp.mounts()[0] == {"name": "space-data", "persistentVolumeClaimName": "space-data",
                              "mountPath": "/data"}


def test_the_catalogue_declares_it_without_settings() -> None:
    spec = cat.feature("spaces")
    assert spec.title == "Dev spaces (notebooks)" and spec.settings == ()
    assert not spec.always_on and spec.requires == ()
    assert "aws-mountpoint-s3-csi-driver" in spec.core   # the shared claims mount through it
    assert cat.check_settings(spec, {}) == {}
    cat.check_switch("spaces", True, set())
    cat.check_switch("spaces", False, {"spaces"})


def test_on_creates_the_driver_then_the_class_the_add_on_and_the_claims_in_order() -> None:
    on = plan(_render(True), {})
    assert [(s.verb, s.key) for s, _ in on.steps] == [
        ("create", k) for k in (ROLE, ASSOCIATION, EBS, CLASS, CONTROLLER_ROLE, CONTROLLER,
                                SPACES, *VOLUMES)]
    assert on.deletes_data() == [] and on.left_alone == []


def test_the_ebs_role_is_pod_identity_for_this_cluster_and_hyperpod_volumes_only() -> None:
    role = _by_key(_render(True))[ROLE].desired
    assert role["managed"] == ["arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"]
    assert role["tags"] == {FEATURE_TAG: "spaces", "podplane:cluster": "gpu"}
    (trust,) = role["trust"]["Statement"]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert trust["Condition"]["StringEquals"]["aws:SourceArn"] == EKS_ARN
    statements = {s["Sid"]: s for s in role["policy"]["Statement"]}
    assert statements["AttachVolumesToClusterNodes"]["Resource"] == FACTS.hyperpod_arn
    assert sorted(statements["AttachVolumesToClusterNodes"]["Action"]) == [
        "sagemaker:AttachClusterNodeVolume", "sagemaker:DetachClusterNodeVolume"]
    assert statements["DescribeEksCluster"]["Resource"] == EKS_ARN
    assert "*" not in str([s["Resource"] for s in statements.values()])
    association = _by_key(_render(True))[ASSOCIATION].desired
    assert association == {"namespace": "kube-system", "serviceAccount": "ebs-csi-controller-sa",
                           "roleArn": FACTS.role_arn(sp.EBS_ROLE_PURPOSE)}


def test_the_controller_role_is_awss_managed_policy_for_this_cluster_only() -> None:
    made = _by_key(_render(True))
    role = made[CONTROLLER_ROLE].desired
    assert role["managed"] == ["arn:aws:iam::aws:policy/AmazonSageMakerSpacesControllerPolicy"]
    assert "policy" not in role and role["tags"][FEATURE_TAG] == "spaces"
    (trust,) = role["trust"]["Statement"]
    assert sorted(trust["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": "111122223333",
                                                  "aws:SourceArn": EKS_ARN}
    assert made[CONTROLLER].desired["roleArn"] == FACTS.role_arn(sp.CONTROLLER_ROLE_PURPOSE)


def test_both_add_ons_are_tagged_as_podplanes_and_the_class_is_the_default_gp3() -> None:
    made = _by_key(_render(True))
    for key, name in ((EBS, "aws-ebs-csi-driver"), (SPACES, "amazon-sagemaker-spaces")):
        assert made[key].desired == {"addonName": name, "tags": {FEATURE_TAG: "spaces"}}
    home = made[CLASS].desired
    assert home["metadata"]["annotations"] == {
        "storageclass.kubernetes.io/is-default-class": "true"}
    assert home["metadata"]["labels"]["podplane.io/feature"] == "spaces"
    assert (home["provisioner"], home["parameters"]["type"], home["volumeBindingMode"]) == (
        "ebs.csi.aws.com", "gp3", "WaitForFirstConsumer")


def test_each_claim_is_a_static_mountpoint_volume_of_its_bucket_prefix() -> None:
    made = _by_key(_render(True))
    handles = set()
    for path, claim in sp.SHARED_CLAIMS.items():
        pv = made[f"kube v1 PersistentVolume {claim}-pv"].desired["spec"]
        pvc = made[f"kube v1 PersistentVolumeClaim default/{claim}"].desired
        prefix = path.strip("/") + "/"
        assert f"prefix {prefix}" in pv["mountOptions"] and "region us-west-2" in pv["mountOptions"]
        assert pv["csi"]["driver"] == "s3.csi.aws.com"
        assert pv["csi"]["volumeAttributes"] == {"bucketName": "podplane-gpu"}
        assert pv["claimRef"] == {"namespace": "default", "name": claim}
        assert pv["persistentVolumeReclaimPolicy"] == "Retain"   # the bucket is never touched
        assert pvc["spec"]["volumeName"] == f"{claim}-pv" and pvc["spec"]["storageClassName"] == ""
        assert pvc["metadata"]["labels"]["podplane.io/feature"] == "spaces"
        handles.add(pv["csi"]["volumeHandle"])
    # a pod mounting all three needs a distinct handle per volume, and none the jobs' one
    assert len(handles) == 3 and "s3-csi-podplane-gpu" not in handles


def test_the_jobs_bucket_volume_is_unchanged_by_the_optional_prefix() -> None:
    pv, _ = s3_volume("podplane-gpu", "us-west-2")
    assert pv["spec"]["mountOptions"] == ["allow-delete", "allow-other", "region us-west-2"]
    assert pv["spec"]["csi"]["volumeHandle"] == "s3-csi-podplane-gpu"


def test_off_deletes_in_reverse_with_the_roles_last_and_is_a_destroy() -> None:
    off = plan(_render(False), _running())
    assert [(s.verb, s.key) for s, _ in off.steps] == [
        ("delete", k) for k in (*reversed(VOLUMES), SPACES, CONTROLLER, CLASS, EBS, ASSOCIATION,
                                CONTROLLER_ROLE, ROLE)]
    # the claims, and the add-on: its removal takes every space and its home volume
    assert sorted(off.deletes_data()) == sorted([*VOLUMES, SPACES])


def test_off_with_only_the_add_on_left_is_still_a_destroy() -> None:
    running = {SPACES: _running()[SPACES]}
    assert plan(_render(False), running).deletes_data() == [SPACES]


def _ctx(role: Role) -> Any:
    return SimpleNamespace(principal=Principal("someone", role, "t"))


def test_off_needs_an_admin_who_confirms() -> None:
    off = plan(_render(False), _running())
    with pytest.raises(Forbidden):
        _escalate_a_destroy(_ctx(Role.OPERATOR), "spaces", off, confirm=True, dry_run=False)
    with pytest.raises(ConfirmationRequired, match="deletes what holds data"):
        _escalate_a_destroy(_ctx(Role.ADMIN), "spaces", off, confirm=False, dry_run=False)
    _escalate_a_destroy(_ctx(Role.ADMIN), "spaces", off, confirm=True, dry_run=False)
    _escalate_a_destroy(_ctx(Role.ADMIN), "spaces", off, confirm=False, dry_run=True)
    # switching it on destroys nothing: an operator may
    _escalate_a_destroy(_ctx(Role.OPERATOR), "spaces", plan(_render(True), {}), confirm=False,
                        dry_run=False)


def test_someone_elses_ebs_driver_gets_no_role_and_is_left_alone() -> None:
    foreign = _render(True, {sp.EBS_FOREIGN: True})
    assert ROLE not in _by_key(foreign) and ASSOCIATION not in _by_key(foreign)
    seen = {EBS: Seen({"addonName": "aws-ebs-csi-driver", "tags": {}}, False)}
    on = plan(foreign, seen)
    assert EBS not in [s.key for s, _ in on.steps]
    assert any(a.startswith(EBS) for a in on.left_alone)
    off = plan(_render(False, {sp.EBS_FOREIGN: True}), {**seen, SPACES: _running()[SPACES]})
    assert [s.key for s, _ in off.steps] == [SPACES]   # and never the driver someone installed


class _Eks:
    def __init__(self, addon: dict[str, Any] | None) -> None:
        self.addon = addon

    async def describe_addon(self, cluster: str, name: str) -> dict[str, Any] | None:
        assert (cluster, name) == ("gpu-eks", "aws-ebs-csi-driver")
        return self.addon


@pytest.mark.parametrize(("addon", "foreign"), [
    (None, False),
    ({"status": "ACTIVE", "tags": {FEATURE_TAG: "spaces"}}, False),
    ({"status": "ACTIVE", "tags": {"team": "storage"}}, True),
    ({"status": "ACTIVE"}, True),
    ({"status": "DELETING", "tags": {}}, False),
])
async def test_the_service_tells_a_foreign_driver_by_its_tag(
        addon: dict[str, Any] | None, foreign: bool) -> None:
    live = SimpleNamespace(eks="gpu-eks",
                           cloud=SimpleNamespace(aws=SimpleNamespace(eks=_Eks(addon))))
    assert await spaces_service.found(live) == {sp.EBS_FOREIGN: foreign}  # type: ignore[arg-type]


# -- end to end, against the sandbox's add-ons (the imported golden cluster) -------------------
URL = f"{BASE}/spaces"


def _roles(cluster: Cluster) -> dict[str, list[str]]:
    """podplane's spaces roles, each with the managed policies attached to it."""
    iam = cluster.stack.aws("iam")
    return {r["RoleName"]: [p["PolicyArn"] for p in iam.list_attached_role_policies(
                RoleName=r["RoleName"])["AttachedPolicies"]]
            for r in iam.list_roles()["Roles"]
            if {"Key": FEATURE_TAG, "Value": "spaces"}
            in iam.list_role_tags(RoleName=r["RoleName"])["Tags"]}


def _associations(cluster: Cluster) -> dict[tuple[str, str], str]:
    eks = cluster.stack.aws("eks")
    return {(a["namespace"], a["serviceAccount"]): eks.describe_pod_identity_association(
                clusterName=CLUSTER, associationId=a["associationId"])["association"]["roleArn"]
            for a in eks.list_pod_identity_associations(clusterName=CLUSTER)["associations"]}


def _claims(cluster: Cluster) -> dict[str, str]:
    found = json.loads(cluster.stack.kubectl("get", "pvc", "-n", "default", "-o", "json"))
    return {c["metadata"]["name"]: c["status"].get("phase", "") for c in found["items"]}


async def test_on_makes_the_add_ons_active_and_the_claims_bound_and_off_removes_them(
        cluster: Cluster) -> None:
    stack = cluster.stack
    # cert-manager and the Mountpoint driver: core dependencies, there before (not podplane's)
    for theirs in ("cert-manager", S3_CSI_ADDON):
        stack.aws("eks").create_addon(clusterName=CLUSTER, addonName=theirs)
    stack.advance(130)
    async with stack.client("operator") as operator:
        on = await operator.patch(URL, json={"enabled": True})
        assert on.status_code == 202, on.text
        done = await finish(operator, on.json())
        assert done["status"] == "succeeded", done.get("error")
        for name in (sp.EBS_ADDON, sp.ADDON):
            addon = addon_of(cluster, name)
            assert addon is not None and addon["status"] == "ACTIVE", addon
            assert addon["tags"] == {FEATURE_TAG: "spaces"}
        assert sorted(_roles(cluster).values()) == [[sp.CONTROLLER_POLICY], [sp.EBS_POLICY]]
        associations = _associations(cluster)
        assert associations[sp.EBS_CONTROLLER] == _role_arn(cluster, sp.EBS_ROLE_PURPOSE)
        assert associations[sp.CONTROLLER] == _role_arn(cluster, sp.CONTROLLER_ROLE_PURPOSE)
        home = json.loads(stack.kubectl("get", "storageclass", sp.HOME_CLASS, "-o", "json"))
        assert home["provisioner"] == "ebs.csi.aws.com"
        claims = _claims(cluster)
        assert {c: claims.get(c) for c in sp.SHARED_CLAIMS.values()} == {
            c: "Bound" for c in sp.SHARED_CLAIMS.values()}
        view = (await operator.get(URL)).json()
        assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == (
            True, True, False), view["drift"]
        await same_again_changes_nothing(operator, cluster, URL, {"enabled": True})

        before = len(stack.ledger())   # off takes every space's home volume: a destroy
        assert (await operator.patch(URL, json={"enabled": False})).status_code == 403
    async with stack.client("admin") as admin:
        assert (await admin.patch(URL, json={"enabled": False})).status_code == 428
        assert len(stack.ledger()) == before
        off = await admin.patch(URL, json={"enabled": False, "confirm": True})
        assert off.status_code == 202, off.text
        assert (await finish(admin, off.json()))["status"] == "succeeded"
        view = (await admin.get(URL)).json()
    assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == (
        False, False, False)
    assert addon_of(cluster, sp.ADDON) is None and addon_of(cluster, sp.EBS_ADDON) is None
    assert _roles(cluster) == {}
    assert not {sp.EBS_CONTROLLER, sp.CONTROLLER} & set(_associations(cluster))
    assert not set(sp.SHARED_CLAIMS.values()) & set(_claims(cluster))
    # what was there before is left: cert-manager and the Mountpoint driver
    assert all(addon_of(cluster, n) is not None for n in ("cert-manager", S3_CSI_ADDON))
    changes = mutations(stack.ledger()[before:])
    assert changes.count("eks:DeleteAddon") == 2 and changes.count("iam:DeleteRole") == 2


def _role_arn(cluster: Cluster, purpose: str) -> str:
    account = cluster.stack.aws("sts").get_caller_identity()["Account"]
    facts = ClusterFacts(CLUSTER, CLUSTER, CLUSTER, account, "us-west-2", "", "")
    return facts.role_arn(purpose)
