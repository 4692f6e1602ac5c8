"""Console sign-in and sign-out are audited, and so is a refused sign-in."""

from __future__ import annotations

from typing import Any


async def _sessions(admin) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    rows = (await admin.get("/api/v1/audit", params={"action": "session.open"})).json()
    rows += (await admin.get("/api/v1/audit", params={"action": "session.close"})).json()
    return sorted(rows, key=lambda r: r["id"])


async def test_sign_in_refusal_and_sign_out_each_leave_one_row(  # type: ignore[no-untyped-def]
        anon, admin, tokens_by_role) -> None:
    assert await _sessions(admin) == []
    refused = await anon.post("/api/v1/session", json={"token": "pp_not-a-token"})
    assert refused.status_code == 401
    signed = await anon.post("/api/v1/session", json={"token": tokens_by_role["operator"]})
    assert signed.status_code == 200, signed.text
    out = await anon.delete("/api/v1/session", headers={"Origin": "http://127.0.0.1:3099"})
    assert out.status_code == 204, out.text
    rows = [(r["principal"], r["face"], r["action"], r["result"]) for r in await _sessions(admin)]
    assert rows == [("anonymous", "ui", "session.open", "error:unauthenticated"),
                    ("t-operator", "ui", "session.open", "ok"),
                    ("t-operator", "ui", "session.close", "ok")]
