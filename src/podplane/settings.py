"""Settings from the environment (PODPLANE_*) and CLI flags (README.md, "Configuration")."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
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

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.home / 'podplane.db'}"

    @property
    def sandbox_dir(self) -> Path:
        return self.home / "sandbox"

    def own_origins(self) -> set[str]:
        hosts = {self.host, "127.0.0.1", "localhost"}
        return {f"http://{h}:{self.port}" for h in hosts} | set(self.allowed_origins)
