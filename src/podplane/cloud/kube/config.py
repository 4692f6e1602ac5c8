"""Client configuration from EKS DescribeCluster: endpoint + CA, and an in-process token."""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from typing import Any

import botocore.session

from podplane.cloud.kube.eks_token import eks_token

TOKEN_REFRESH_SECONDS = 600  # tokens live 15 minutes; refresh well before


@dataclass
class EksAccess:
    cluster_name: str
    endpoint: str
    ca_pem: bytes
    region: str = "us-east-1"
    session: botocore.session.Session | None = None
    sts_endpoint: str | None = None
    _token: str = field(default="", repr=False)
    _made_at: float = field(default=0.0, repr=False)

    @classmethod
    def from_describe_cluster(
        cls,
        response: dict[str, Any],
        region: str,
        session: botocore.session.Session | None = None,
        sts_endpoint: str | None = None,
    ) -> EksAccess:
        cluster = response.get("cluster", response)
        ca = base64.b64decode(cluster["certificateAuthority"]["data"])
        return cls(cluster["name"], cluster["endpoint"], ca, region, session, sts_endpoint)

    def token(self) -> str:
        if not self._token or time.monotonic() - self._made_at > TOKEN_REFRESH_SECONDS:
            self._token = eks_token(self.cluster_name, self.region, self.session, self.sts_endpoint)
            self._made_at = time.monotonic()
        return self._token
