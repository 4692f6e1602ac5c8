"""The instance id of a Node, from the providerID shapes real clusters carry."""

from __future__ import annotations

import pytest

from podplane.domain.node_identity import instance_id_of
from podplane.services.groups.steps import instance_id


@pytest.mark.parametrize(("provider", "name", "want"), [
    # HyperPod node on a live cluster (format also parsed by aws/amazon-vpc-cni-k8s)
    ("aws:///use1-az4/sagemaker/cluster/hyperpod-tqci9uwuwqiz-i-0f190b8fa232cef49",
     "hyperpod-i-0f190b8fa232cef49", "i-0f190b8fa232cef49"),
    # a plain EKS node
    ("aws:///us-east-1a/i-0123456789abcdef0", "ip-10-0-0-1.ec2.internal", "i-0123456789abcdef0"),
    # an 8-hex legacy instance id
    ("aws:///usw2-az2/sagemaker/cluster/hyperpod-abc-i-0123abcd", "", "i-0123abcd"),
    # no providerID yet: the HyperPod node name
    ("", "hyperpod-i-00000000000000001", "i-00000000000000001"),
    # neither: unknown
    ("gce://proj/zone/vm-1", "vm-1", None),
    ("", "hyperpod-i-0zz", None),
])
def test_instance_id_from_provider_id(provider: str, name: str, want: str | None) -> None:
    assert instance_id_of(provider, name) == want


def test_group_steps_reads_the_real_hyperpod_shape() -> None:
    """The old parser took the last `/` segment: `hyperpod-<id>-i-…`, never the instance id."""
    node = {"metadata": {"name": "hyperpod-i-0f190b8fa232cef49"},
            "spec": {"providerID": "aws:///use1-az4/sagemaker/cluster/"
                                   "hyperpod-tqci9uwuwqiz-i-0f190b8fa232cef49"}}
    assert instance_id(node) == "i-0f190b8fa232cef49"
    assert instance_id({"metadata": {"name": "x"}, "spec": {}}) == ""
