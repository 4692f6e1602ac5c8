"""Tokens made and revoked in the UI, seen in the audit log; what other roles are shown."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import MakeToken, Server, shot, sign_in


def _create_token(page: Page, name: str, role: str) -> str:
    page.get_by_role("button", name="Create token").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Token name").fill(name)
    dialog.get_by_role("button", name=re.compile("Token role")).click()
    page.get_by_role("option", name=re.compile(f"^{role}")).click()
    dialog.get_by_role("button", name="Create token").click()
    alert = page.get_by_text(f"Token {name} created ({role})")
    expect(alert).to_be_visible()
    secret = page.locator("[data-testid=new-token-secret]").inner_text().strip()
    assert secret.startswith("pp_"), secret
    return secret


def test_token_created_in_the_ui_is_audited_and_works(page: Page, admin_token: str,
                                                      browser, server: Server) -> None:  # type: ignore[no-untyped-def]
    sign_in(page, admin_token, "/tokens")
    secret = _create_token(page, "ui-made", "operator")
    row = page.get_by_role("row", name=re.compile("ui-made"))
    expect(row).to_contain_text("operator")
    expect(row).to_contain_text("active")
    shot(page, "04-tokens")
    side = page.get_by_role("navigation", name="Side navigation")
    expect(side.get_by_text("admin", exact=True)).to_have_count(0)  # no restriction to mark

    page.get_by_role("link", name="Audit log").click()
    expect(page).to_have_url(re.compile(r"/audit$"))
    entry = page.get_by_role("row").filter(has_text="token.create").filter(has_text="token/ui-made")
    expect(entry).to_contain_text("ui-admin")
    expect(entry).to_contain_text("admin · via ui")  # role and face
    expect(entry).to_contain_text("ok")
    shot(page, "03-audit")

    # The secret shown once signs in, as an operator who cannot manage tokens.
    other = browser.new_context(base_url=server.url, viewport={"width": 1440, "height": 900})
    try:
        op = other.new_page()
        sign_in(op, secret, "/tokens")
        expect(op.locator("#pp-top")).to_contain_text("ui-made · operator")
        expect(op.get_by_text("Tokens are managed by admins")).to_be_visible()
        expect(op.get_by_text("Needs the admin role; you are operator.")).to_be_visible()
        expect(op.get_by_role("button", name="Create token")).to_have_count(0)
        side = op.get_by_role("navigation", name="Side navigation")
        expect(side.get_by_text("admin", exact=True)).to_be_visible()  # the role Tokens needs
        shot(op, "05-tokens-as-operator")
    finally:
        other.close()


def test_revoke_goes_through_a_confirmation(
    page: Page, admin_token: str, make_token: MakeToken
) -> None:
    make_token("to-revoke", "viewer")
    sign_in(page, admin_token, "/tokens")
    page.get_by_role("radio", name="Select token to-revoke").check()
    page.get_by_role("button", name="Revoke").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Revoke token to-revoke?")
    expect(dialog).to_contain_text("loses access at once")
    shot(page, "06-revoke-confirmation")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("row", name=re.compile("to-revoke"))).to_contain_text("active")

    page.get_by_role("button", name="Revoke").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Token to-revoke revoked.")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile("to-revoke"))).to_contain_text("revoked")

    page.goto("/audit?action=token.revoke")
    expect(page.get_by_role("row").filter(has_text="token/to-revoke")).to_contain_text("ui-admin")


def test_audit_filters_are_exact_and_clearable(page: Page, admin_token: str) -> None:
    sign_in(page, admin_token, "/tokens")
    _create_token(page, "filter-me", "viewer")
    page.goto("/audit")
    page.get_by_label("Filter by principal").fill("nobody-at-all")
    expect(page.get_by_text("No entries match these filters")).to_be_visible()
    expect(page).to_have_url(re.compile(r"principal=nobody-at-all"))
    page.get_by_role("button", name="Clear filters").click()
    expect(page.get_by_role("row").filter(has_text="token/filter-me")).to_be_visible()
