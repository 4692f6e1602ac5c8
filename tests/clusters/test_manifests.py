"""Rendered dependency manifests: pure, versioned, labelled, and schedulable where they must be."""

from __future__ import annotations

import pytest

from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.manifests.common import UNIT_LABEL

MANIFEST_UNITS = [u for u in CORE_UNITS if u.kind == "manifest"]


@pytest.mark.parametrize("unit", MANIFEST_UNITS, ids=lambda u: u.name)
def test_every_manifest_unit_renders_versioned_labelled_objects(unit) -> None:  # type: ignore[no-untyped-def]
    objs = manifests.for_unit(unit.name, unit.version or "0")
    assert objs
    for obj in objs:
        meta = obj["metadata"]
        assert meta["labels"][UNIT_LABEL] == unit.name
        assert meta["annotations"][manifests.VERSION_ANNOTATION] == unit.version
        if obj["kind"] == "DaemonSet":
            spec = obj["spec"]
            template_labels = spec["template"]["metadata"]["labels"]
            assert spec["selector"]["matchLabels"].items() <= template_labels.items()
            pod = spec["template"]["spec"]
            assert pod["tolerations"] == [{"operator": "Exists"}]  # runs on tainted GPU nodes
            assert pod["nodeSelector"]
            assert all(c["image"].endswith(unit.version or "") for c in pod["containers"])
    namespaced = {o["metadata"].get("namespace") for o in objs} - {None}
    created = {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"}
    assert namespaced <= created | {"kube-system"}


def test_version_bump_changes_only_the_annotation_and_image() -> None:
    old = manifests.for_unit("nvidia-device-plugin", "0.17.1")[0]
    new = manifests.for_unit("nvidia-device-plugin", "0.18.0")[0]
    assert old["metadata"]["name"] == new["metadata"]["name"]
    assert new["metadata"]["annotations"][manifests.VERSION_ANNOTATION] == "0.18.0"
    assert new["spec"]["template"]["spec"]["containers"][0]["image"].endswith("v0.18.0")


def test_s3_volume_binds_the_claim_to_the_bucket() -> None:
    pv, pvc = manifests.s3_volume("my-bucket", "us-west-2")
    assert pv["spec"]["csi"]["driver"] == "s3.csi.aws.com"
    assert pv["spec"]["csi"]["volumeAttributes"] == {"bucketName": "my-bucket"}
    assert pv["spec"]["claimRef"] == {"namespace": "default", "name": "s3-claim"}
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"]
    assert "region us-west-2" in pv["spec"]["mountOptions"]


def test_unknown_unit_is_refused() -> None:
    with pytest.raises(KeyError):
        manifests.for_unit("helm-chart", "1")
