"""Calls that hand a role to a service, retried while IAM propagates.

IAM is eventually consistent: a role just created, or whose trust policy just changed, can be
refused for a while by EKS and SageMaker (AWS IAM User Guide, troubleshooting "changes that I
make are not always immediately visible"). The refusal is classified `iam_role_not_ready`
(domain/cloud_errors.py); this retries it with backoff on the step's clock for about a minute,
then fails with a clear error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from podplane.domain.cloud_errors import ROLE_NOT_READY
from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext

T = TypeVar("T")
PROPAGATION_SECONDS = 60.0
MAX_DELAY = 15.0


async def while_iam_propagates(ctx: StepContext, role_arn: str,
                               call: Callable[[], Awaitable[T]]) -> T:
    waited, delay = 0.0, 2.0
    while True:
        try:
            return await call()
        except CloudError as err:
            if err.code != ROLE_NOT_READY:
                raise
            if waited >= PROPAGATION_SECONDS:
                raise CloudError(
                    f"{role_arn} could still not be assumed after {waited:.0f} s: "
                    f"{err.message}", code="iam_role_not_assumable", retryable=False,
                    hint="Check that the role exists and that its trust policy allows the "
                    "service (eks.amazonaws.com, sagemaker.amazonaws.com, "
                    "hyperpod.sagemaker.amazonaws.com or pods.eks.amazonaws.com) to assume "
                    "it; then retry the step.") from err
            if waited == 0:
                await ctx.note("the role is not usable yet (IAM propagates); retrying",
                               role=role_arn)
            await ctx.sleep(delay)
            waited += delay
            delay = min(delay * 2, MAX_DELAY)
