"""Sign in, see who you are, deep links, sign out: in Chromium against a real server."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import MakeToken, Watch, shot, sign_in


def test_sign_in_shows_principal_and_role(page: Page, admin_token: str) -> None:
    page.goto("/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    shot(page, "01-sign-in")
    sign_in(page, admin_token)
    expect(page.locator("#pp-top")).to_contain_text("ui-admin · admin")
    expect(page).to_have_url(re.compile(r"/operations$"))  # the console's home
    page.reload()  # the session cookie, not page state, keeps us signed in
    expect(page.locator("#pp-top")).to_contain_text("ui-admin · admin")


def test_wrong_token_shows_the_servers_problem(page: Page, watch: Watch) -> None:
    watch.allow_error("401")  # the browser logs the failed sign-in request itself
    page.goto("/")
    page.get_by_label("API token").fill("pp_not-a-real-token")
    page.get_by_role("button", name="Sign in").click()
    alert = page.get_by_text("Sign-in failed")
    expect(alert).to_be_visible()
    expect(page.get_by_text("The token is unknown or revoked.")).to_be_visible()
    expect(page.get_by_text("code: unauthenticated")).to_be_visible()
    shot(page, "02-sign-in-failed")


def test_deep_link_survives_sign_in(page: Page, make_token: MakeToken) -> None:
    token = make_token("deep-link", "viewer")
    sign_in(page, token, "/audit?action=token.create")
    expect(page).to_have_url(re.compile(r"/audit\?action=token\.create$"))
    expect(page.get_by_label("Filter by action")).to_have_value("token.create")


def test_sign_out_ends_the_session(page: Page, make_token: MakeToken) -> None:
    sign_in(page, make_token("leaver", "viewer"))
    page.wait_for_load_state("networkidle")  # the audit page's first read finishes first
    page.locator("#pp-top").get_by_role("button", name=re.compile("leaver")).click()
    page.get_by_role("menuitem", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.goto("/tokens")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
