"""The console's own table of who may do what (web/src/permissions.ts, used to hide or
disable controls) says what the services declare: one role per action, the server's. A
service whose role changes, or an action the console names that no service declares, fails
here (issue 35: who may do what was written three times and the console's copy untested)."""

from __future__ import annotations

import re
from pathlib import Path

import podplane.api.app  # noqa: F401  (imports every router: each registers its services)
from podplane.domain.effects import Role
from podplane.services.access import authority
from podplane.services.registry import REGISTRY

TABLE = Path(__file__).parents[2] / "web" / "src" / "permissions.ts"
# Actions the console names for a request that a service raises to a destroy (admin) by what
# it would do: fewer nodes terminates instances; pods=0 removes the endpoint; delete_home
# destroys a space's home volume (ADR 0016).
ESCALATED = {"instance_group.scale_down": "instance_group.scale",
             "pool.unassign": "pool.assign", "space.delete_home": "space.delete"}


def console_needs() -> dict[str, str]:
    text = TABLE.read_text()
    block = text[text.index("export const NEEDS"):]
    block = block[:block.index("};")]
    found = dict(re.findall(r'"([a-z_]+\.[a-z_]+)":\s*"(viewer|operator|admin)"', block))
    assert len(found) >= 20, f"the table was not read: {found}"
    return found


def test_every_action_of_the_console_needs_the_role_its_service_declares() -> None:
    wrong = {}
    for action, role in console_needs().items():
        if action in ESCALATED:
            want = authority.KINDS[ESCALATED[action]].role
            assert authority.KINDS[ESCALATED[action]].destroys, action
        else:
            assert action in REGISTRY, f"{action}: no service declares it"
            want = REGISTRY[action].role
        if Role(role) is not want:
            wrong[action] = (role, want.value)
    assert wrong == {}, f"console role vs the service's: {wrong}"
