"""Settings from the environment (PODPLANE_*) and CLI flags (README.md, "Configuration")."""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PODPLANE_", extra="ignore")

    home: Path = Field(default_factory=lambda: Path.home() / ".podplane")
    database_url: str | None = None
    backend: Literal["sandbox", "aws"] = "sandbox"
    host: str = "127.0.0.1"
    port: int = 3099
    # Extra origins allowed for cookie-authenticated writes and WebSocket handshakes.
    allowed_origins: list[str] = Field(default_factory=list)
    aws_endpoint_url: str | None = None
    # Empty: resolved at start by bootstrap (the sandbox's region, or with PODPLANE_BACKEND=aws
    # the one boto3 resolves: AWS_REGION, AWS_DEFAULT_REGION, the profile).
    region: str = ""
    session_ttl_seconds: int = 12 * 3600
    max_body_bytes: int = 1_000_000
    # The console's address as users reach it (https://podplane.example.com). It decides the
    # session cookie's Secure flag and __Host- prefix and the origin trusted for writes.
    public_url: str | None = None
    # Dev spaces open on hosts of their own, `<space>.<cluster>.<domain>` (docs/spaces.md): a
    # space's pages must not share the console's origin. `localhost` needs no DNS (its
    # subdomains are loopback); a deployment sets a wildcard name, e.g. spaces.example.com.
    spaces_domain: str = Field(default="localhost",
                               pattern=r"^[a-z0-9]([a-z0-9.-]{0,200}[a-z0-9])?$")
    spaces_port: int | None = None   # the port browsers reach spaces on (default: port)
    # With public_url: other Host values served (host[:port]; a proxy that rewrites Host).
    allowed_hosts: list[str] = Field(default_factory=list)
    # Per token, per process (docs/security.md): request rate, and what it may hold open.
    rate_per_second: float = Field(default=50.0, gt=0)
    rate_burst: float = Field(default=500.0, ge=1)
    max_waiters: int = Field(default=16, ge=1)  # concurrent long-poll waits
    # Per client address, failed authentications (unknown token, expired session) before its
    # requests are refused ahead of any look-up (services/access/strangers.py).
    stranger_rate_per_second: float = Field(default=10.0, gt=0)
    stranger_burst: float = Field(default=100.0, ge=1)
    max_streams: int = Field(default=16, ge=1)  # concurrent WebSockets and MCP streams
    # MCP sessions a token may hold open, and how long one may idle before it ends (the SDK's
    # default is 30 minutes; an agent that idles longer initializes again).
    mcp_sessions_per_token: int = Field(default=32, ge=1, le=10_000)
    mcp_session_idle_seconds: float = Field(default=300.0, gt=0, le=86_400)
    # Registries (or repositories: docker.io/vllm) an endpoint's or pool's `image` may come
    # from; empty allows any (an operator's image runs in the cluster: docs/security.md).
    allowed_image_registries: list[str] = Field(default_factory=list)
    # The permissions boundary (a managed policy ARN) of every IAM role podplane creates; the
    # documented policy lets podplane create and grant roles only with it (aws-permissions.md).
    role_permissions_boundary: str | None = None
    # A running job whose pods all wrote nothing this long shows as stalled (services/jobs/
    # stall.py; the default is PyTorch's NCCL watchdog timeout).
    job_stall_seconds: int = Field(default=600, ge=60, le=86_400)
    # The request path's tail (ADR 0011, docs/benchmarks.md): the stdlib loop rather than
    # uvloop, and young collections every N allocations (Python's default is 700); 0 leaves
    # Python's collector as it is (no freezing either: podplane.heap).
    event_loop: Literal["asyncio", "uvloop"] = "asyncio"
    young_gc_threshold: int = Field(default=10_000, ge=0, le=1_000_000)

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.home / 'podplane.db'}"

    @property
    def sandbox_dir(self) -> Path:
        return self.home / "sandbox"

    @field_validator("young_gc_threshold")
    @classmethod
    def _zero_or_a_real_threshold(cls, value: int) -> int:
        if 0 < value < 100:  # a young collection every few allocations would stall the loop
            raise ValueError("must be 0 (Python's collector untouched) or at least 100")
        return value

    @field_validator("public_url")
    @classmethod
    def _public_url_is_http(cls, value: str | None) -> str | None:
        if value:
            _origin_of(value)  # refused at start, not at the first sign-in
        return value or None

    @property
    def secure_cookies(self) -> bool:
        return self.public_origin is not None and self.public_origin.startswith("https://")

    @property
    def session_cookie(self) -> str:
        # __Host-: the browser only keeps it when Secure, Path=/ and no Domain (RFC 6265bis
        # section 4.1.3.2), so no sibling host can set or shadow it.
        return "__Host-podplane_session" if self.secure_cookies else "podplane_session"

    @property
    def public_origin(self) -> str | None:
        """scheme://host[:port] of public_url, default ports dropped as browsers send Origin."""
        return _origin_of(self.public_url) if self.public_url else None

    def own_origins(self) -> set[str]:
        if self.public_origin is not None:  # behind a proxy: only the public address is ours
            return {self.public_origin} | set(self.allowed_origins)
        hosts = {self.host, "127.0.0.1", "localhost"}
        return {f"http://{h}:{self.port}" for h in hosts} | set(self.allowed_origins)


def _origin_of(url: str) -> str:
    """The Origin a browser sends for pages under `url` (RFC 6454: scheme, host, port; the
    scheme's default port omitted)."""
    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in ("http", "https") or not host:
        raise ValueError(f"PODPLANE_PUBLIC_URL must be http(s)://host[:port], not {url!r}")
    default = {"http": 80, "https": 443}[scheme]
    port = f":{parts.port}" if parts.port and parts.port != default else ""
    return f"{scheme}://{host}{port}"
