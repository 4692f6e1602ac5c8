"""EKS tokens made in-process with botocore, and the emulator's verification of them (the
checks of aws-iam-authenticator's verifier plus the SigV4 signature STS would check)."""

from __future__ import annotations

import base64
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from podplane.cloud.kube.eks_token import eks_token, static_session
from podplane_sandbox.contracts import Signer
from podplane_sandbox.kube.auth import TokenRejected, verify

ALICE = Signer("arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:user/alice",
               "alice-secret")


def _url(token: str) -> str:
    body = token.removeprefix("k8s-aws-v1.")
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()


def _token_of(url: str) -> str:
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


def _signers(key: str) -> Signer | None:
    return ALICE if key == "AKIAALICE" else None


def _alice(cluster: str = "train", secret: str = "alice-secret") -> str:
    return eks_token(cluster, "us-west-2", static_session("AKIAALICE", secret))


def test_token_is_a_presigned_sts_url_signing_the_cluster_header() -> None:
    token = _alice()
    assert token.startswith("k8s-aws-v1.") and "=" not in token
    url = urlsplit(_url(token))
    query = parse_qs(url.query)
    assert url.hostname == "sts.us-west-2.amazonaws.com"
    assert query["Action"] == ["GetCallerIdentity"]
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"][0].split(";")
    assert query["X-Amz-Expires"] == ["60"]


def test_a_good_token_names_its_signer() -> None:
    assert verify(_alice(), "train", _signers, time.time()) == ALICE


@pytest.mark.parametrize("why", ["other cluster", "wrong secret", "unknown key"])
def test_signature_is_checked_with_the_keys_secret_and_this_clusters_name(why: str) -> None:
    token = {"other cluster": _alice("serve"), "wrong secret": _alice(secret="guess"),
             "unknown key": eks_token("train", "us-west-2", static_session("AKIAEVE", "x"))}[why]
    with pytest.raises(TokenRejected):
        verify(token, "train", _signers, time.time())


def test_tokens_live_fifteen_minutes_after_signing_whatever_x_amz_expires_says() -> None:
    token, now = _alice(), time.time()
    assert verify(token, "train", _signers, now + 14 * 60) == ALICE  # Expires=60 is ignored
    with pytest.raises(TokenRejected, match="expired"):
        verify(token, "train", _signers, now + 16 * 60)


def test_cluster_name_as_a_query_parameter_is_refused() -> None:
    url = _url(_alice()) + "&x-k8s-aws-id=train"
    with pytest.raises(TokenRejected, match="non-whitelisted"):
        verify(_token_of(url), "train", _signers, time.time())


def test_shape_rules_of_the_eks_verifier() -> None:
    url = _url(_alice())
    bad = {
        "not an EKS token": _alice().replace("k8s-aws-v1.", "k8s-aws-v2."),
        "http scheme": _token_of(url.replace("https://", "http://")),
        "foreign host": _token_of(url.replace("sts.us-west-2.amazonaws.com", "evil.example")),
        "unsigned cluster header": _token_of(url.replace("x-k8s-aws-id", "x-other")),
        "another action": _token_of(url.replace("GetCallerIdentity", "AssumeRole")),
    }
    for why, token in bad.items():
        with pytest.raises(TokenRejected):
            verify(token, "train", _signers, time.time())
            pytest.fail(why)


def test_the_sandboxes_own_sts_endpoint_counts_as_sts() -> None:
    token = eks_token("train", "us-west-2", static_session("AKIAALICE", "alice-secret"),
                      sts_endpoint="http://127.0.0.1:4566")
    with pytest.raises(TokenRejected):
        verify(token, "train", _signers, time.time())
    assert verify(token, "train", _signers, time.time(), frozenset({"127.0.0.1:4566"})) == ALICE
