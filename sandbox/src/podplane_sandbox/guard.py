"""Who may talk to the sandbox's endpoint (docs/sandbox.md "Control API safety").

The AWS endpoint takes any credentials (moto checks no signature), and `/_sandbox` and moto's
`/moto-api` can reset, fault or rewrite the whole account. A web page the user opens can reach a
loopback port: by a cross-site request (its `Origin` is foreign) or by DNS rebinding (its
`Host` is the attacker's name resolving to 127.0.0.1). So, on every path:
- a request whose `Host` is not a loopback name is refused (403);
- a request that carries an `Origin` other than the sandbox's own is refused (403);
and the control routes also need the random secret of the sandbox's env file (401 without it).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# one definition of the names, shared with the product's clients of the control API
from podplane.cloud.sandbox_secret import SECRET_ENV, SECRET_HEADER

CONTROL_PREFIXES = ("/_sandbox", "/moto-api")
Response = tuple[int, dict[str, str], bytes]


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def write_private(path: Path, text: str) -> None:
    """Write `text` readable by its owner only (0600), atomically: never a moment at 0644."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w") as out:
        out.write(text)
    tmp.replace(path)


def private_tree(home: Path, folder: Path) -> None:
    """The home (0700) and the sandbox's folder in it, as the owner's alone whoever made them
    first: folders 0700, files 0600, what an older version left wider included (issue 34, S8:
    the kube store holds Secrets, a user's HF token among them)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    home.chmod(0o700)
    folder.chmod(0o700)
    for path in folder.rglob("*"):
        if not path.is_symlink():
            path.chmod(0o700 if path.is_dir() else 0o600)


def is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):  # RFC 6761: always loopback
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Guard:
    def __init__(self, secret: str, port: int = 0) -> None:
        self.secret, self.port = secret, port

    def refuse(self, environ: dict[str, Any], path: str) -> Response | None:
        """None when the request may go on; otherwise the refusal to send."""
        host = urlsplit(f"//{environ.get('HTTP_HOST', '')}").hostname or ""
        if not is_loopback(host):
            return _error(403, f"Host {host or '(none)'!r} is not a loopback name.")
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and not self._own_origin(origin):
            return _error(403, f"Origin {origin!r} may not call the sandbox.")
        if path.startswith(CONTROL_PREFIXES) and not self._has_secret(environ):
            return _error(401, f"{path} needs the {SECRET_HEADER} header "
                               f"({SECRET_ENV} in the sandbox's env file).")
        return None

    def _own_origin(self, origin: str) -> bool:
        parts = urlsplit(origin)
        return (parts.scheme == "http" and is_loopback(parts.hostname or "")
                and parts.port == self.port)

    def _has_secret(self, environ: dict[str, Any]) -> bool:
        sent = environ.get("HTTP_" + SECRET_HEADER.upper().replace("-", "_"), "")
        return hmac.compare_digest(sent.encode(), self.secret.encode())


def _error(status: int, message: str) -> Response:
    return status, {"Content-Type": "application/json"}, json.dumps({"error": message}).encode()
