"""Signed passes to a space's own origin (pure: a key and a clock in, bytes out).

A ticket (60 s, used once) carries a person from the console to the space's origin; there it
becomes a space session (a cookie of that origin only, 8 h at most, and never longer than the
podplane token or session it came from stays valid: the gateway asks on every request).
Both are HMAC-SHA256 over their claims (RFC 2104), compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import asdict, dataclass

TICKET_SECONDS = 60
SESSION_SECONDS = 8 * 3600


@dataclass(frozen=True)
class Pass:
    kind: str          # "ticket" | "session"
    cluster: str
    space: str
    token_id: str      # the podplane token (or console session's token) it was minted for
    who: str           # the principal's name, for the audit
    nonce: str
    expires: float


def seal(key: bytes, grant: Pass) -> str:
    # unpadded base64url and hex: a cookie value and a query value as it is (RFC 6265 4.1.1)
    body = base64.urlsafe_b64encode(json.dumps(asdict(grant), sort_keys=True).encode())
    body = body.rstrip(b"=")
    mac = hmac.new(key, body, hashlib.sha256).hexdigest()
    return f"{body.decode()}.{mac}"


def unseal(key: bytes, text: str, kind: str, now: float) -> Pass | None:
    """The pass if it is ours, of this kind and not expired; None otherwise (never why:
    a forger learns nothing)."""
    body, _, mac = text.rpartition(".")
    want = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    if not body or not hmac.compare_digest(mac, want):
        return None
    try:
        padded = body + "=" * (-len(body) % 4)
        grant = Pass(**json.loads(base64.urlsafe_b64decode(padded.encode())))
    except (ValueError, TypeError):
        return None
    return grant if grant.kind == kind and grant.expires > now else None


def space_host(name: str, cluster: str, domain: str) -> str:
    """A space's own host: its own origin, so its pages' scripts reach neither podplane's API
    with the viewer's cookie nor another space (browsers keep host-only cookies per host;
    `*.localhost` is loopback: RFC 6761 section 6.3)."""
    return f"{name}.{cluster}.{domain}"


def parse_host(host: str, domain: str) -> tuple[str, str] | None:
    """(space, cluster) of a Host header (port dropped) naming a space, else None."""
    name = host.rsplit(":", 1)[0].lower() if not host.startswith("[") else host
    suffix = "." + domain.lower()
    if not name.endswith(suffix):
        return None
    labels = name[: -len(suffix)].split(".")
    return (labels[0], labels[1]) if len(labels) == 2 and all(labels) else None
