"""boto3 clients (retry mode `standard`) and one async `call` with error mapping and backoff.

botocore already retries throttling a few times; on top of that, retryable errors (throttling,
not capacity: that needs a decision) back off with jitter and are reported to an
observer so operation steps can show "throttled, attempt 3".
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable
from typing import Any

import boto3
from botocore import UNSIGNED
from botocore.config import Config

from podplane import heap
from podplane.cloud.aws.errors import to_cloud_error
from podplane.cloud.ports_aws import RetryObserver, Shape
from podplane.domain.cloud_errors import RETRIED_CODES
from podplane.domain.errors import CloudError


class AwsCaller:
    def __init__(self, region: str, endpoint_url: str | None = None, max_attempts: int = 5,
                 base_delay: float = 0.5, max_delay: float = 20.0,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 observer: RetryObserver | None = None,
                 session: boto3.session.Session | None = None,
                 botocore_attempts: int = 3) -> None:
        self.region = region
        self.endpoint_url = endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
        self.max_attempts, self.base_delay, self.max_delay = max_attempts, base_delay, max_delay
        self.sleep = sleep
        self.observer = observer
        self.session = session or boto3.session.Session(region_name=region)
        self._clients: dict[str, Any] = {}
        self._config = Config(retries={"mode": "standard",
                                       "total_max_attempts": botocore_attempts},
                              connect_timeout=5, read_timeout=60)

    def anonymous(self) -> AwsCaller:
        """The same endpoint and retries with unsigned requests: for public objects only (S3
        User Guide, "anonymous requests" are allowed by a bucket policy granting "*"), so
        reading them needs no IAM action of ours."""
        twin = AwsCaller(self.region, self.endpoint_url, self.max_attempts, self.base_delay,
                         self.max_delay, self.sleep, self.observer, self.session)
        twin._config = self._config.merge(Config(signature_version=UNSIGNED))
        return twin

    def client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = self.session.client(
                service, region_name=self.region, endpoint_url=self.endpoint_url,
                config=self._config)
            heap.settle()  # its service model stays for the process's life
        return self._clients[service]

    async def call(self, service: str, operation: str, **params: Any) -> Shape:
        """Call `operation` (boto3 snake_case) and return the response without metadata."""
        method = getattr(self.client(service), operation)
        attempt = 0
        while True:
            attempt += 1
            try:
                response: Shape = await asyncio.to_thread(method, **params)
            except Exception as raw:  # botocore raises many types; all are mapped
                err = to_cloud_error(raw, f"{service}.{operation}")
                if err.code not in RETRIED_CODES or attempt >= self.max_attempts:
                    err.extra["attempts"] = attempt
                    raise err from raw
                if self.observer:
                    self.observer(f"{service}.{operation}", attempt, err)
                await self.sleep(self._delay(attempt))
                continue
            response.pop("ResponseMetadata", None)
            return response

    async def maybe(self, service: str, operation: str, **params: Any) -> Shape | None:
        """Like `call`, but a not-found answer is None (inspect-before-create)."""
        try:
            return await self.call(service, operation, **params)
        except CloudError as err:
            if err.code == "cloud_not_found":
                return None
            raise

    def _delay(self, attempt: int) -> float:
        cap = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return random.uniform(cap / 2, cap)  # noqa: S311 - jitter, not crypto
