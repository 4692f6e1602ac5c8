"""Token names end up in audit rows, log lines and URLs: only the documented alphabet, whole."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("name", ["ci-bot\n", "ci\x00bot", "ci\tbot", "system", "Ci-Bot", ""])
async def test_a_bad_token_name_is_refused_and_creates_nothing(admin, name: str) -> None:  # type: ignore[no-untyped-def]
    before = (await admin.get("/api/v1/tokens")).json()
    r = await admin.post("/api/v1/tokens", json={"name": name, "role": "viewer"})
    assert r.status_code == 422, r.text
    assert r.json()["code"] in {"invalid_input", "validation_error"}
    assert (await admin.get("/api/v1/tokens")).json() == before


async def test_a_good_token_name_is_taken(admin) -> None:  # type: ignore[no-untyped-def]
    r = await admin.post("/api/v1/tokens", json={"name": "ci.bot-2", "role": "viewer"})
    assert r.status_code == 201, r.text
    names = [t["name"] for t in (await admin.get("/api/v1/tokens")).json()]
    assert "ci.bot-2" in names
