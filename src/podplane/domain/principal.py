"""Who is calling, through which face."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from podplane.domain.effects import Role

Face = Literal["ui", "api", "agent", "cli"]
FACES: tuple[str, ...] = ("ui", "api", "agent", "cli")


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role
    token_id: str
    face: Face = "api"

    def with_face(self, face: Face) -> Principal:
        return Principal(self.name, self.role, self.token_id, face)


SYSTEM = Principal(name="system", role=Role.ADMIN, token_id="system", face="cli")
# Who a refused sign-in is audited as: the token was not recognised, so nobody is named.
ANONYMOUS = Principal(name="anonymous", role=Role.VIEWER, token_id="-", face="ui")
