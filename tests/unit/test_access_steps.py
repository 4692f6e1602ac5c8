"""podplane's access entry and the add-ons' Pod Identity roles, on the EKS, STS and IAM fakes."""

from __future__ import annotations

import json

import pytest

from podplane.domain.aws_identity import CLUSTER_ADMIN_POLICY
from podplane.domain.dependencies import CSI_IDENTITY
from podplane.domain.errors import CloudError
from podplane.services.clusters.access import ensure_access_entry
from podplane.services.clusters.addon_identity import addon_role_name, associations_to_pass
from tests.fakes.cloud import Fakes

ME = "arn:aws:iam::111122223333:user/podplane"


async def test_a_missing_access_entry_is_created_and_the_old_client_forgotten() -> None:
    fakes = Fakes()
    done = await ensure_access_entry(fakes.cloud(), "alpha-eks")
    assert done == {"principal": ME, "access_entry": "created"}
    assert [(op, p.get("policy")) for op, p in fakes.eks.calls] == [
        ("create_access_entry", None), ("associate_access_policy", CLUSTER_ADMIN_POLICY)]
    assert fakes.kube.forgotten == ["alpha-eks"]


async def test_a_present_entry_changes_nothing() -> None:
    fakes = Fakes()
    fakes.eks.access_entries["alpha-eks"] = [ME]
    assert (await ensure_access_entry(fakes.cloud(), "alpha-eks"))["access_entry"] == "present"
    assert fakes.eks.changed() == [] and fakes.kube.forgotten == []


async def test_a_refused_entry_names_the_commands_an_admin_can_run() -> None:
    fakes = Fakes()
    fakes.eks.fail("list_access_entries", "AccessDeniedException")
    with pytest.raises(CloudError) as err:
        await ensure_access_entry(fakes.cloud(), "alpha-eks")
    assert err.value.code == "kube_access_missing" and "create-access-entry" in str(err.value.hint)


async def test_the_csi_driver_role_is_made_scoped_to_the_bucket() -> None:
    fakes = Fakes()
    passed = await associations_to_pass(fakes.cloud(), "alpha", CSI_IDENTITY, "podplane-b")
    name = addon_role_name("alpha", "s3csi", "us-west-2")
    assert passed == [{"serviceAccount": "s3-csi-driver-sa",
                       "roleArn": f"arn:aws:iam::111122223333:role/{name}"}]
    trust = json.loads(fakes.iam.roles[name]["AssumeRolePolicyDocument"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert "podplane-b" in fakes.iam.inline[name]["podplane"]


async def test_an_existing_association_is_not_passed_again() -> None:
    fakes = Fakes()
    await fakes.eks.create_pod_identity_association("alpha", "kube-system", "s3-csi-driver-sa",
                                                    "arn:r")
    assert await associations_to_pass(fakes.cloud(), "alpha", CSI_IDENTITY, "b") == []
    assert fakes.iam.roles == {}
