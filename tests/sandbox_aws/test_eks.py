"""EKS emulator: lifecycles on the virtual clock, add-ons, access entries, pod identity."""

from __future__ import annotations

import base64

import pytest
from botocore.exceptions import ClientError

from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.sandbox_aws.conftest import ROLE, Box
from tests.sandbox_aws.iam_setup import make_role


def make_cluster(box: Box, name: str = "eks1", mode: str = "API_AND_CONFIG_MAP") -> None:
    subnet, sg = "subnet-0a1b2c3d4e5f60718", "sg-0a1b2c3d4e5f60718"  # EKS does not look them up
    box.client("eks").create_cluster(
        name=name, roleArn=ROLE, accessConfig={"authenticationMode": mode},
        resourcesVpcConfig={"subnetIds": [subnet], "securityGroupIds": [sg]})


def test_cluster_is_creating_until_the_clock_passes_then_active(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    assert eks.describe_cluster(name="eks1")["cluster"]["status"] == "CREATING"
    box.advance(540)
    creating = eks.describe_cluster(name="eks1")["cluster"]
    assert creating["status"] == "CREATING" and "endpoint" not in creating
    box.advance(180)
    active = eks.describe_cluster(name="eks1")["cluster"]
    assert active["status"] == "ACTIVE"
    assert active["endpoint"] == "https://127.0.0.1:16443"
    assert active["identity"]["oidc"]["issuer"].startswith("https://oidc.eks.us-west-2.")
    assert eks.list_clusters()["clusters"] == ["eks1"]


def test_describe_cluster_returns_the_kube_ca_once_written(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    assert eks.describe_cluster(name="eks1")["cluster"]["certificateAuthority"]["data"] == ""
    pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    (box.sandbox.folder / "kube-ca.crt").write_bytes(pem)
    data = eks.describe_cluster(name="eks1")["cluster"]["certificateAuthority"]["data"]
    assert base64.b64decode(data) == pem


def test_errors_have_aws_codes(box: Box) -> None:
    eks = box.client("eks")
    with pytest.raises(ClientError) as missing:
        eks.describe_cluster(name="nope")
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"
    assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert "eks.DescribeCluster!ResourceNotFoundException" in box.shapes.checked  # body checked
    make_cluster(box)
    with pytest.raises(ClientError) as dup:
        make_cluster(box)
    assert dup.value.response["Error"]["Code"] == "ResourceInUseException"
    with pytest.raises(ClientError) as busy:
        eks.update_cluster_config(name="eks1", logging={"clusterLogging": [
            {"types": ["api"], "enabled": True}]})
    assert busy.value.response["Error"]["Code"] == "ResourceInUseException"


def test_update_cluster_config_goes_through_describe_update(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    update = eks.update_cluster_config(name="eks1", accessConfig={"authenticationMode": "API"})
    assert update["update"]["type"] == "AccessConfigUpdate"
    assert eks.describe_cluster(name="eks1")["cluster"]["status"] == "UPDATING"
    uid = update["update"]["id"]
    assert eks.describe_update(name="eks1", updateId=uid)["update"]["status"] == "InProgress"
    box.advance(200)
    assert eks.describe_update(name="eks1", updateId=uid)["update"]["status"] == "Successful"
    cluster = eks.describe_cluster(name="eks1")["cluster"]
    assert cluster["status"] == "ACTIVE"
    assert cluster["accessConfig"]["authenticationMode"] == "API"
    assert eks.list_updates(name="eks1")["updateIds"] == [uid]


def test_addons_versions_lifecycle_and_failure_fault(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    versions = eks.describe_addon_versions(addonName="vpc-cni", kubernetesVersion="1.33")
    assert versions["addons"][0]["addonVersions"][0]["addonVersion"].startswith("v1.")
    addon = eks.create_addon(clusterName="eks1", addonName="vpc-cni")["addon"]
    assert addon["status"] == "CREATING"
    box.control("POST", "/faults", json={"kind": "addon_failure", "addon_name": "coredns"})
    eks.create_addon(clusterName="eks1", addonName="coredns")
    box.advance(130)
    assert eks.describe_addon(clusterName="eks1", addonName="vpc-cni")["addon"]["status"] \
        == "ACTIVE"
    failed = eks.describe_addon(clusterName="eks1", addonName="coredns")["addon"]
    assert failed["status"] == "CREATE_FAILED"
    assert failed["health"]["issues"][0]["code"] == "InsufficientNumberOfReplicas"
    assert sorted(eks.list_addons(clusterName="eks1")["addons"]) == ["coredns", "vpc-cni"]
    with pytest.raises(ClientError) as unknown:
        eks.create_addon(clusterName="eks1", addonName="not-an-addon")
    assert unknown.value.response["Error"]["Code"] == "InvalidParameterException"
    update = eks.update_addon(clusterName="eks1", addonName="vpc-cni",
                              addonVersion="v1.19.5-eksbuild.3")["update"]
    box.advance(130)
    done = eks.describe_update(name="eks1", updateId=update["id"], addonName="vpc-cni")
    assert done["update"]["status"] == "Successful"
    eks.delete_addon(clusterName="eks1", addonName="vpc-cni")
    box.advance(61)
    assert eks.list_addons(clusterName="eks1")["addons"] == ["coredns"]


def test_access_entries_and_policies(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    creator = eks.list_access_entries(clusterName="eks1")["accessEntries"]
    assert creator == ["arn:aws:iam::123456789012:user/sandbox-admin"]  # the `test` key
    principal = "arn:aws:iam::123456789012:role/podplane"
    eks.create_access_entry(clusterName="eks1", principalArn=principal)
    policy = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
    eks.associate_access_policy(clusterName="eks1", principalArn=principal, policyArn=policy,
                                accessScope={"type": "namespace", "namespaces": ["team-a"]})
    assoc = eks.list_associated_access_policies(clusterName="eks1", principalArn=principal)
    assert [a["policyArn"] for a in assoc["associatedAccessPolicies"]] == [policy]
    with pytest.raises(ClientError) as dup:
        eks.create_access_entry(clusterName="eks1", principalArn=principal)
    assert dup.value.response["Error"]["Code"] == "ResourceInUseException"
    assert len(eks.list_access_policies()["accessPolicies"]) >= 4
    eks.disassociate_access_policy(clusterName="eks1", principalArn=principal, policyArn=policy)
    eks.delete_access_entry(clusterName="eks1", principalArn=principal)
    assert principal not in eks.list_access_entries(clusterName="eks1")["accessEntries"]


def test_access_entries_need_api_authentication_mode(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box, mode="CONFIG_MAP")
    box.advance(700)
    with pytest.raises(ClientError) as err:
        eks.list_access_entries(clusterName="eks1")
    assert err.value.response["Error"]["Code"] == "InvalidRequestException"


def test_pod_identity_associations(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    assoc = eks.create_pod_identity_association(
        clusterName="eks1", namespace="kube-system", serviceAccount="ebs-csi", roleArn=ROLE)
    aid = assoc["association"]["associationId"]
    assert aid.startswith("a-")
    with pytest.raises(ClientError) as dup:
        eks.create_pod_identity_association(
            clusterName="eks1", namespace="kube-system", serviceAccount="ebs-csi", roleArn=ROLE)
    assert dup.value.response["Error"]["Code"] == "ResourceInUseException"
    listed = eks.list_pod_identity_associations(clusterName="eks1", namespace="kube-system")
    assert [a["associationId"] for a in listed["associations"]] == [aid]
    make_role(box.client, "podplane-test-2")
    box.advance(LAG_SECONDS)
    eks.update_pod_identity_association(clusterName="eks1", associationId=aid,
                                        roleArn=ROLE + "-2")
    got = eks.describe_pod_identity_association(clusterName="eks1", associationId=aid)
    assert got["association"]["roleArn"] == ROLE + "-2"
    eks.delete_pod_identity_association(clusterName="eks1", associationId=aid)
    assert eks.list_pod_identity_associations(clusterName="eks1")["associations"] == []


def test_delete_cluster_goes_through_deleting(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    assert eks.delete_cluster(name="eks1")["cluster"]["status"] == "DELETING"
    box.advance(301)
    with pytest.raises(ClientError):
        eks.describe_cluster(name="eks1")


def test_invalid_input_is_rejected_like_aws(box: Box) -> None:
    eks = box.client("eks")
    # botocore validates client-side too; go around it to check the server's own validation
    import httpx
    r = httpx.post(f"{box.url}/clusters", json={"name": "x"},
                   headers={"Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/"
                                             "us-west-2/eks/aws4_request"})
    assert r.status_code == 400
    assert r.headers["x-amzn-ErrorType"] == "InvalidParameterException"
    assert "roleArn" in r.json()["message"]
    assert eks.list_clusters()["clusters"] == []


def test_version_update_and_degraded_addon_update(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    update = eks.update_cluster_version(name="eks1", version="1.34")["update"]
    assert update["type"] == "VersionUpdate"
    box.advance(181)
    assert eks.describe_cluster(name="eks1")["cluster"]["version"] == "1.34"
    eks.create_addon(clusterName="eks1", addonName="kube-proxy")
    box.advance(121)
    box.control("POST", "/faults", json={"kind": "addon_failure", "addon_name": "kube-proxy"})
    failing = eks.update_addon(clusterName="eks1", addonName="kube-proxy",
                               addonVersion="v1.32.3-eksbuild.7")["update"]
    box.advance(121)
    addon = eks.describe_addon(clusterName="eks1", addonName="kube-proxy")["addon"]
    assert addon["status"] == "DEGRADED" and addon["health"]["issues"]
    assert eks.describe_update(name="eks1", updateId=failing["id"],
                               addonName="kube-proxy")["update"]["status"] == "Failed"


def test_version_updates_go_one_minor_at_a_time(box: Box) -> None:
    eks = box.client("eks")
    make_cluster(box)
    box.advance(700)
    with pytest.raises(ClientError) as err:
        eks.update_cluster_version(name="eks1", version="1.35")
    assert err.value.response["Error"]["Code"] == "InvalidParameterException"


def test_retry_with_the_same_client_token_is_idempotent(box: Box) -> None:
    eks = box.client("eks")
    kwargs = {"name": "eks1", "roleArn": ROLE, "clientRequestToken": "op-42",
              "resourcesVpcConfig": {"subnetIds": ["subnet-0a1b2c3d4e5f60718"]}}
    first = eks.create_cluster(**kwargs)["cluster"]
    again = eks.create_cluster(**kwargs)["cluster"]
    assert again["arn"] == first["arn"]
    assert len(box.ledger(action="CreateCluster")) == 1
    with pytest.raises(ClientError) as other:
        eks.create_cluster(**{**kwargs, "clientRequestToken": "op-43"})
    assert other.value.response["Error"]["Code"] == "ResourceInUseException"


def test_describe_cluster_versions_lists_what_create_accepts(box: Box) -> None:
    eks = box.client("eks")
    versions = eks.describe_cluster_versions()["clusterVersions"]
    names = [v["clusterVersion"] for v in versions]
    assert "1.33" in names and sum(v["defaultVersion"] for v in versions) == 1
    assert [v["clusterVersion"] for v in eks.describe_cluster_versions(
        defaultOnly=True)["clusterVersions"]] == ["1.33"]
    with pytest.raises(ClientError) as err:
        eks.create_cluster(name="old", roleArn=ROLE, version="1.20",
                           resourcesVpcConfig={"subnetIds": ["subnet-0a1b2c3d4e5f60718"]})
    assert err.value.response["Error"]["Code"] == "InvalidParameterException"


def test_cluster_subnets_must_span_two_azs(box: Box) -> None:
    from tests.sandbox_aws.conftest import network, second_subnet

    eks = box.client("eks")
    subnet, _ = network(box, az="us-west-2a")
    with pytest.raises(ClientError) as err:
        eks.create_cluster(name="one-az", roleArn=ROLE,
                           resourcesVpcConfig={"subnetIds": [subnet]})
    assert err.value.response["Error"]["Code"] == "InvalidParameterException"
    other = second_subnet(box, az="us-west-2b")
    eks.create_cluster(name="two-az", roleArn=ROLE,
                       resourcesVpcConfig={"subnetIds": [subnet, other]})
    assert eks.list_clusters()["clusters"] == ["two-az"]


def test_addon_configuration_schema(box: Box) -> None:
    import json

    eks = box.client("eks")
    conf = eks.describe_addon_configuration(addonName="vpc-cni",
                                            addonVersion="v1.20.0-eksbuild.1")
    assert json.loads(conf["configurationSchema"])["type"] == "object"
    assert conf["podIdentityConfiguration"][0]["serviceAccount"] == "aws-node"
    with pytest.raises(ClientError) as err:
        eks.describe_addon_configuration(addonName="vpc-cni", addonVersion="v0.0.1")
    assert err.value.response["Error"]["Code"] == "ResourceNotFoundException"
