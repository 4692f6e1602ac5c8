"""EKS bearer tokens made in-process with botocore, the way aws-iam-authenticator expects:
a presigned STS GetCallerIdentity URL whose signature covers the x-k8s-aws-id header."""

from __future__ import annotations

import base64
from typing import Any

import botocore.session

TOKEN_PREFIX = "k8s-aws-v1."
CLUSTER_HEADER = "x-k8s-aws-id"
EXPIRES_SECONDS = 60  # EKS accepts a token for 15 minutes after its signing time


def eks_token(
    cluster_name: str,
    region: str = "us-east-1",
    session: botocore.session.Session | None = None,
    sts_endpoint: str | None = None,
) -> str:
    session = session or botocore.session.get_session()
    sts = session.create_client("sts", region_name=region, endpoint_url=sts_endpoint)

    def add_cluster_header(request: Any, **_: Any) -> None:
        request.headers[CLUSTER_HEADER] = cluster_name

    sts.meta.events.register("before-sign.sts.GetCallerIdentity", add_cluster_header)
    url = sts.generate_presigned_url(
        "get_caller_identity", Params={}, ExpiresIn=EXPIRES_SECONDS, HttpMethod="GET"
    )
    encoded = base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
    return TOKEN_PREFIX + encoded


def static_session(access_key: str, secret_key: str) -> botocore.session.Session:
    session = botocore.session.get_session()
    session.set_credentials(access_key, secret_key)
    return session
