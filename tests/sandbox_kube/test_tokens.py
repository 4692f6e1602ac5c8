"""EKS tokens made in-process with botocore, and the emulator's check of them."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlsplit

from podplane.cloud.kube.eks_token import eks_token, static_session
from podplane.sandbox.kube.auth import cluster_of


def _url(token: str) -> str:
    body = token.removeprefix("k8s-aws-v1.")
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()


def test_token_is_a_presigned_sts_url_signing_the_cluster_header() -> None:
    token = eks_token("my-cluster", "us-west-2", static_session("AKIAEXAMPLE", "secret"))
    assert token.startswith("k8s-aws-v1.") and "=" not in token
    url = urlsplit(_url(token))
    query = parse_qs(url.query)
    assert url.hostname == "sts.us-west-2.amazonaws.com"
    assert query["Action"] == ["GetCallerIdentity"]
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"][0].split(";")
    assert query["X-Amz-Expires"] == ["60"]
    assert cluster_of("Bearer " + token) == "*"


def test_emulator_rejects_tokens_that_are_not_eks_tokens() -> None:
    good = eks_token("c", "us-east-1", static_session("AKIAEXAMPLE", "secret"))
    assert cluster_of(None) is None
    assert cluster_of("Bearer " + good.replace("k8s-aws-v1.", "k8s-aws-v2.")) is None
    unsigned = _url(good).replace("x-k8s-aws-id", "x-other")
    forged = "k8s-aws-v1." + base64.urlsafe_b64encode(unsigned.encode()).decode()
    assert cluster_of("Bearer " + forged) is None
    named = (
        "https://sts.amazonaws.com/?Action=GetCallerIdentity&X-Amz-Algorithm=A"
        "&X-Amz-Credential=c&X-Amz-Date=d&X-Amz-SignedHeaders=host&x-k8s-aws-id=train"
        "&X-Amz-Signature=" + "a" * 64
    )
    assert (
        cluster_of("Bearer k8s-aws-v1." + base64.urlsafe_b64encode(named.encode()).decode())
        == "train"
    )
