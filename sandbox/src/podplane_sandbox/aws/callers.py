"""Who signed a request: access key -> principal, as STS GetCallerIdentity reports it.

Sources: the STS API reference for GetCallerIdentity (an IAM user answers
`arn:aws:iam::<acct>:user/<name>` with its unique id `AIDA...`; a role session answers
`arn:aws:sts::<acct>:assumed-role/<role>/<session>` with `AROA...:<session>`), and
aws-iam-authenticator `pkg/arn` (EKS maps an assumed-role ARN to the role's IAM ARN).

Keys moto knows (IAM user access keys, AssumeRole sessions) resolve to their principal. The
sandbox's default pair (`test`/`test`, written to the env file) is the IAM user
`sandbox-admin`. Any other key is unknown, as AWS would answer InvalidClientTokenId.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from podplane_sandbox.aws.world import ACCOUNT
from podplane_sandbox.contracts import SANDBOX_ADMIN_ARN, SANDBOX_KEY, SANDBOX_SECRET

DEFAULT_KEY, DEFAULT_SECRET, DEFAULT_ARN = SANDBOX_KEY, SANDBOX_SECRET, SANDBOX_ADMIN_ARN
DEFAULT_USER_ID = "AIDASANDBOXADMIN0001"
_ASSUMED = re.compile(r"^arn:(aws[\w-]*):sts::(\d{12}):assumed-role/([^/]+)/[^/]+$")


@dataclass(frozen=True)
class Caller:
    arn: str        # as GetCallerIdentity answers it
    user_id: str    # AIDA... for a user, AROA...:<session> for a role session
    account: str
    secret: str     # the secret access key that signs this caller's requests

    @property
    def principal_arn(self) -> str:
        """The IAM ARN EKS matches access entries against (a session -> its role)."""
        return canonical_arn(self.arn)


def canonical_arn(arn: str) -> str:
    m = _ASSUMED.match(arn)
    return f"arn:{m.group(1)}:iam::{m.group(2)}:role/{m.group(3)}" if m else arn


def caller_of(access_key: str) -> Caller | None:
    """The principal behind an access key, or None when AWS would not know the key."""
    if access_key == DEFAULT_KEY:
        return Caller(DEFAULT_ARN, DEFAULT_USER_ID, ACCOUNT, DEFAULT_SECRET)
    return _moto_caller(access_key)


def _moto_caller(access_key: str) -> Caller | None:
    from moto.iam.models import iam_backends
    from moto.sts.models import sts_backends

    role = sts_backends[ACCOUNT]["aws"].get_assumed_role_from_access_key(access_key)
    if role is not None:
        return Caller(role.arn, role.user_id, ACCOUNT, role.secret_access_key)
    iam = iam_backends[ACCOUNT]["aws"]
    for user in list(iam.users.values()):
        for key in user.access_keys:
            if key.access_key_id == access_key and key.status == "Active":
                return Caller(user.arn, user.id, ACCOUNT, key.secret_access_key)
    return None


def access_key_of(authorization: str | None) -> str | None:
    """The access key id in a SigV4 Authorization header (Credential=AKID/date/region/...)."""
    m = re.search(r"Credential=([^/,\s]+)/", authorization or "")
    return m.group(1) if m else None


def caller_identity_xml(caller: Caller, request_id: str) -> bytes:
    """The STS query-protocol answer to GetCallerIdentity."""
    return (
        '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
        f"<GetCallerIdentityResult><Arn>{caller.arn}</Arn><UserId>{caller.user_id}</UserId>"
        f"<Account>{caller.account}</Account></GetCallerIdentityResult>"
        f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>"
        "</GetCallerIdentityResponse>").encode()


def invalid_token_xml(request_id: str) -> bytes:
    return (
        '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error>'
        "<Type>Sender</Type><Code>InvalidClientTokenId</Code>"
        "<Message>The security token included in the request is invalid.</Message>"
        f"</Error><RequestId>{request_id}</RequestId></ErrorResponse>").encode()


def sts_get_caller_identity(environ: dict[str, Any],
                            body: bytes) -> tuple[int, dict[str, str], bytes] | None:
    """Our answer to STS GetCallerIdentity (moto's names every unknown key `user/moto`)."""
    form = parse_qs(body.decode("utf-8", "replace")) if body else {}
    form.update(parse_qs(environ.get("QUERY_STRING", "")))
    if (form.get("Action") or [""])[0] != "GetCallerIdentity":
        return None
    key = access_key_of(environ.get("HTTP_AUTHORIZATION"))
    if key is None and form.get("X-Amz-Credential"):
        key = form["X-Amz-Credential"][0].split("/")[0]
    caller = caller_of(key) if key else None
    request_id = str(uuid.uuid4())
    headers = {"Content-Type": "text/xml", "x-amzn-RequestId": request_id}
    if caller is None:
        return 403, headers, invalid_token_xml(request_id)
    return 200, headers, caller_identity_xml(caller, request_id)
