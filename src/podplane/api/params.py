"""Route parameters every router shares, declared once so the OpenAPI document describes
each the same way wherever it appears."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Path, Query

from podplane.domain.effects import DRY_RUN
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN
from podplane.services import pod_logs as logs_room

ClusterName = Annotated[str, Path(min_length=1, max_length=DNS_LABEL_MAX,
                                  pattern=DNS_LABEL_PATTERN)]
GroupName = Annotated[str, Path(min_length=1, max_length=DNS_LABEL_MAX,
                                pattern=DNS_LABEL_PATTERN)]
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", min_length=1, max_length=256, pattern=r"^[\x21-\x7e]+$",
           description="Same key + same body returns the same operation; a different body "
                       "is a 409 idempotency_key_reused."),
]
DryRun = Annotated[bool, Query(description=DRY_RUN)]
Confirm = Annotated[bool, Query(description="Required for destructive changes.")]

# The query of a paged log read, a job's or an endpoint's (bounds: services/pod_logs.py).
LogPod = Annotated[str | None, Query(max_length=253, pattern=DNS_LABEL_PATTERN)]
LogContainer = Annotated[str | None, Query(max_length=63, pattern=DNS_LABEL_PATTERN)]
LogSince = Annotated[int | None, Query(ge=1, le=logs_room.MAX_SINCE_SECONDS)]
LogTail = Annotated[int | None, Query(ge=1, le=logs_room.MAX_LINES_PER_POD)]
LogCursor = Annotated[int, Query(ge=0, le=10**7)]
LogLimit = Annotated[int, Query(ge=1, le=logs_room.MAX_PAGE)]
