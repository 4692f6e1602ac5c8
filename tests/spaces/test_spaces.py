"""Dev spaces end to end on a podplane-created cluster (a copy of the run's golden world):
the feature on, a space created, its files (a bucket object a job would read, a file in its
home), stop and start with the home intact, the same requests again changing nothing, roles,
and a delete that keeps the home volume. The sandbox runs the workspace operator and a Jupyter
server that checks the token (docs/sandbox.md)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from podplane.domain.spaces import render
from podplane.services.cloud_access import cloud_of
from tests.conftest import client_for
from tests.groups.conftest import finish
from tests.jobs.conftest import CLUSTER, store
from tests.mcp.conftest import mcp_client, structured
from tests.served import serving
from tests.spaces.kernels import replies_to
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
API = f"/api/v1/clusters/{CLUSTER}"
SPACES = f"{API}/spaces"
NB = {"name": "nb", "cpu": "500m", "memory": "2Gi", "storage_gib": 10}


async def _done(stack: Stack, answer: Any) -> dict[str, Any]:
    assert answer.status_code == 202, answer.text
    async with stack.client("admin") as api:
        op = await finish(api, answer.json())
    assert op["status"] == "succeeded", [(s["name"], s.get("error")) for s in op["steps"]]
    return op


async def _spaces_on(stack: Stack) -> None:
    """The feature on (each test may run alone; on already, the same request changes nothing)."""
    async with stack.client("admin") as admin:
        r = await admin.patch(f"{API}/features/spaces", json={"enabled": True})
        if r.status_code != 200:
            await _done(stack, r)


def _bucket(stack: Stack) -> str:
    names = [b["Name"] for b in stack.aws("s3").list_buckets()["Buckets"]]
    mine = [n for n in names if CLUSTER in n]
    assert len(mine) == 1, names
    return mine[0]


async def _write_home(stack: Stack, name: str, path: str, text: str) -> None:
    """A file saved from the notebook: a PUT to the server's contents API, with its token."""
    kube = await cloud_of(stack.app.state.podplane).kube_for(CLUSTER)
    secret = store(stack).find("secrets", "default", render.token_secret(name))
    token = base64.b64decode(secret["data"]["token"]).decode()
    where = render.base_path(CLUSTER, name).lstrip("/") + f"api/contents/{path}"
    status, body = await kube.proxy("PUT", "default", f"workspace-{name}-service", 8888,
                                    f"{where}?token={token}",
                                    {"type": "file", "format": "text", "content": text})
    assert status in (200, 201), (status, body)


def _names(listing: dict[str, Any]) -> set[str]:
    return {e["name"] for e in listing["entries"]}


async def test_a_space_before_the_feature_is_refused_and_changes_nothing(
        cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    async with stack.client("operator") as api:
        r = await api.post(SPACES, json=NB)
        assert r.status_code == 409 and r.json()["code"] == "feature_off", r.text
        assert (await api.get(SPACES)).json() == []


async def test_space_lifecycle(cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    await _spaces_on(stack)
    async with stack.client("operator") as api:
        r = await api.post(SPACES, json={**NB, "gpus": 1})
        assert r.status_code == 422 and r.json()["field"] == "instance_group", r.text
        await _done(stack, await api.post(SPACES, json=NB))
        seen = (await api.get(f"{SPACES}/nb")).json()
        assert seen["state"] == "Running" and [p["ready"] for p in seen["pods"]] == [True]
        assert {m["path"] for m in seen["mounts"]} == {
            render.HOME, "/data", "/models", "/outputs"}
        again = await api.post(SPACES, json=NB)   # the same request again changes nothing
        assert again.status_code == 200 and again.json()["changed"] is False, again.text

        stack.aws("s3").put_object(Bucket=_bucket(stack), Key="data/train/hello.txt",
                                   Body=b"from a job")
        listing = (await api.get(f"{SPACES}/nb/files", params={"path": "data/train"})).json()
        assert "hello.txt" in _names(listing), listing
        await _write_home(stack, "nb", "home/sagemaker-user/notes.txt", "kept")

        await _done(stack, await api.patch(f"{SPACES}/nb", json={"desired": "Stopped"}))
        stopped = (await api.get(f"{SPACES}/nb")).json()
        assert stopped["state"] == "Stopped" and stopped["pods"] == [], stopped
        r = await api.get(f"{SPACES}/nb/files", params={"path": "data"})
        assert r.status_code == 409, r.text
        same = await api.patch(f"{SPACES}/nb", json={"desired": "Stopped"})
        assert same.status_code == 200 and same.json()["changed"] is False, same.text

        await _done(stack, await api.patch(f"{SPACES}/nb", json={"desired": "Running"}))
        home = (await api.get(f"{SPACES}/nb/files",
                              params={"path": "home/sagemaker-user"})).json()
        assert "notes.txt" in _names(home), home


async def test_roles(cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    async with stack.client("viewer") as viewer:
        assert [s["name"] for s in (await viewer.get(SPACES)).json()] == ["nb"]
        assert (await viewer.get(f"{SPACES}/nb/files")).status_code == 403
        assert (await viewer.post(SPACES, json={**NB, "name": "v"})).status_code == 403
        assert (await viewer.patch(f"{SPACES}/nb", json={"desired": "Stopped"})
                ).status_code == 403
    async with stack.client("operator") as api:   # deleting the home is an admin's destroy
        r = await api.delete(f"{SPACES}/nb", params={"delete_home": "true", "confirm": "true"})
        assert r.status_code == 403, r.text
        assert (await api.get(f"{SPACES}/nb")).json()["state"] == "Running"


async def test_an_agent_makes_a_space_and_hands_over_its_link_in_three_calls(
        cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    await _spaces_on(stack)
    async with mcp_client(stack.app, stack.tokens["operator"]) as mcp:
        calls = 0

        async def call(tool: str, **args: Any) -> dict[str, Any]:
            nonlocal calls
            calls += 1
            result = await mcp.call_tool(tool, args)
            assert not result.is_error, (tool, result.content[0].text)  # type: ignore[union-attr]
            return structured(result)["result"]  # type: ignore[no-any-return]

        made = await call("space_create", cluster=CLUSTER, name="agent1", storage_gib=5)
        done = await call("operation_wait", operation_id=made["id"])
        assert done["status"] == "succeeded", done
        space = await call("space_get", cluster=CLUSTER, name="agent1")
    assert calls == 3 and space["state"] == "Running"
    assert space["console_path"] == f"/clusters/{CLUSTER}/spaces/agent1"


async def test_an_idle_gpu_space_stops_itself_and_frees_its_gpu(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    await _spaces_on(stack)
    async with stack.client("operator") as api:
        await _done(stack, await api.post(SPACES, json={
            "name": "gpu1", "instance_group": group, "gpus": 1, "idle_minutes": 10}))
        plan = (await api.post(SPACES, params={"dry_run": "true"}, json={
            "name": "gpu2", "instance_group": group, "gpus": 1})).json()["plan"]
        busy = plan["gpus_free"]
        stack.advance(25 * 60)   # idle past its timeout and the operator's check interval
        seen = (await api.get(f"{SPACES}/gpu1")).json()
        assert (seen["desired"], seen["state"], seen["pods"]) == ("Stopped", "Stopped", [])
        plan = (await api.post(SPACES, params={"dry_run": "true"}, json={
            "name": "gpu2", "instance_group": group, "gpus": 1})).json()["plan"]
        assert plan["gpus_free"] == busy + 1, plan


async def test_delete_keeps_the_home_and_a_new_space_finds_it(
        cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    async with stack.client("operator") as api:
        await _done(stack, await api.delete(f"{SPACES}/nb"))
        assert (await api.get(f"{SPACES}/nb")).status_code == 404
        assert store(stack).find("persistentvolumeclaims", "default", "space-nb-home")
        await _done(stack, await api.post(SPACES, json=NB))   # the same name again
        home = (await api.get(f"{SPACES}/nb/files",
                              params={"path": "home/sagemaker-user"})).json()
        assert "notes.txt" in _names(home), home
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{SPACES}/nb", params={"delete_home": "true"})
        assert r.status_code == 428, r.text   # a destroy: confirm first, nothing changed
        assert store(stack).find("persistentvolumeclaims", "default", "space-nb-home")
        await _done(stack, await admin.delete(f"{SPACES}/nb", params={
            "delete_home": "true", "confirm": "true"}))
    assert store(stack).find("persistentvolumeclaims", "default", "space-nb-home") is None


async def test_open_in_the_browser_on_the_spaces_own_origin(cluster: tuple[Stack, str]) -> None:
    """The link's ticket becomes a session of the space's host only; pages and the contents
    API come through with the server's token added; the session opens no other space, a
    ticket works once, a viewer gets no link, a forged cookie nothing."""
    stack, _ = cluster
    await _spaces_on(stack)
    async with stack.client("operator") as api:
        await _done(stack, await api.post(SPACES, json={**NB, "name": "web"}))
        opened = (await api.post(f"{SPACES}/web/open")).json()
    async with stack.client("viewer") as viewer:
        assert (await viewer.post(f"{SPACES}/web/open")).status_code == 403
    url = httpx.URL(opened["url"])
    assert url.host == f"web.{CLUSTER}.localhost" and url.path == f"/spaces/{CLUSTER}/web/lab"
    browser = httpx.AsyncClient(transport=httpx.ASGITransport(app=stack.app),
                                base_url=f"http://{url.host}:3099")
    async with browser:   # the jar keeps the space's cookie, as a browser does
        r = await browser.get(url.raw_path.decode())
        assert r.status_code == 303 and "podplane_ticket" not in r.headers["location"], r.text
        cookie = r.cookies["podplane_space"]
        assert "httponly" in r.headers["set-cookie"].lower()
        page = await browser.get(f"/spaces/{CLUSTER}/web/lab")
        assert page.status_code == 200 and "JupyterLab" in page.text, page.text
        files = await browser.get(f"/spaces/{CLUSTER}/web/api/contents/data")
        assert files.status_code == 200 and files.json()["type"] == "directory", files.text
        again = await browser.get(url.raw_path.decode())   # the ticket was spent
        assert again.status_code == 401, again.text
        browser.cookies.clear()
        assert (await browser.get(f"/spaces/{CLUSTER}/web/lab")).status_code == 401
        browser.cookies.set("podplane_space", cookie[:-4] + "0000")   # forged
        assert (await browser.get(f"/spaces/{CLUSTER}/web/lab")).status_code == 401
    other = httpx.AsyncClient(transport=httpx.ASGITransport(app=stack.app),
                              base_url=f"http://nb.{CLUSTER}.localhost:3099")
    other.cookies.set("podplane_space", cookie)
    async with other:   # this session is for `web`, sent to `nb`'s host
        r = await other.get(f"/spaces/{CLUSTER}/nb/lab")
        assert r.status_code == 403, r.text


async def test_a_template_bounds_and_fills_a_space_before_anything_is_written(
        cluster: tuple[Stack, str]) -> None:
    """An admin's template: everyone lists it; a space outside its bounds is refused naming
    the field and the bound, with nothing written; a space asking for nothing gets its
    defaults and is admitted by the operator's webhook; a template in use stays."""
    stack, _ = cluster
    await _spaces_on(stack)
    small = {"memory": "2Gi", "max_cpu": "2", "max_memory": "8Gi", "storage_gib": 5,
             "max_storage_gib": 10, "idle_minutes": 30}
    async with stack.client("operator") as api:
        r = await api.put(f"{API}/space-templates/small", json=small)
        assert r.status_code == 403, r.text
    async with stack.client("admin") as admin:
        bad = await admin.put(f"{API}/space-templates/odd", json={**small, "cpu": "4"})
        assert bad.status_code == 422 and bad.json()["field"] == "cpu", bad.text
        made = await admin.put(f"{API}/space-templates/small", json=small)
        assert made.status_code == 200 and made.json()["changed"] is True, made.text
        again = await admin.put(f"{API}/space-templates/small", json=small)
        assert again.json()["changed"] is False, again.text
    async with stack.client("viewer") as viewer:
        [seen] = (await viewer.get(f"{API}/space-templates")).json()
    assert (seen["name"], seen["max_cpu"], seen["memory"], seen["storage_gib"],
            seen["idle_minutes"], seen["made_by"]) == ("small", "2", "2Gi", 5, 30, "podplane")
    assert seen["images"][0].endswith("-cpu")

    async with stack.client("operator") as api:
        for extra, field, words in (({"cpu": "4"}, "cpu", "maximum 2"),
                                    ({"storage_gib": 50}, "storage_gib", "maximum 10"),
                                    ({"image": "docker.io/library/python:3.12"}, "image",
                                     "not allowed")):
            r = await api.post(SPACES, json={"name": "tp", "template": "small", **extra})
            assert r.status_code == 422 and r.json()["field"] == field, r.text
            assert words in r.json()["detail"], r.text
        missing = await api.post(SPACES, json={"name": "tp", "template": "nope"})
        assert missing.status_code == 404, missing.text
        assert store(stack).find("workspace.jupyter.org/workspaces", "default", "tp") is None
        assert store(stack).find("secrets", "default", render.token_secret("tp")) is None
        assert store(stack).find("persistentvolumeclaims", "default", "space-tp-home") is None

        await _done(stack, await api.post(SPACES, json={"name": "tp", "template": "small"}))
        space = (await api.get(f"{SPACES}/tp")).json()
    assert (space["template"], space["memory"], space["storage"], space["idle_minutes"]) == (
        "small", "2Gi", "5Gi", 30), space
    async with stack.client("admin") as admin:
        used = await admin.delete(f"{API}/space-templates/small")
        assert used.status_code == 409 and "tp" in used.json()["detail"], used.text
        gone = await admin.delete(f"{API}/space-templates/odd")
        assert gone.status_code == 200 and gone.json()["changed"] is False, gone.text
    async with mcp_client(stack.app, stack.tokens["admin"]) as mcp:
        made = await mcp.call_tool("space_template_set", {
            "cluster": CLUSTER, "name": "gpu-lab", "max_gpus": 1})
        listed = await mcp.call_tool("space_template_list", {"cluster": CLUSTER})
        dropped = await mcp.call_tool("space_template_set", {
            "cluster": CLUSTER, "name": "gpu-lab", "delete": True})
    assert structured(made)["result"]["changed"] is True
    assert [t["name"] for t in structured(listed)["result"]] == ["gpu-lab", "small"]
    assert structured(dropped)["result"]["plan"]["action"] == "delete"


async def _space_session(stack: Stack, name: str, token_name: str) -> str:
    """A browser's session cookie for the space, from a link opened with a new operator
    token named `token_name`."""
    async with stack.client("admin") as api:
        if (await api.get(f"{SPACES}/{name}")).status_code == 404:
            await _done(stack, await api.post(SPACES, json={**NB, "name": name}))
        minted = await api.post("/api/v1/tokens", json={"name": token_name, "role": "operator"})
    async with client_for(stack.app, minted.json()["token"]) as operator:
        opened = httpx.URL((await operator.post(f"{SPACES}/{name}/open")).json()["url"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=stack.app),
                                 base_url=f"http://{opened.host}:3099") as browser:
        return str((await browser.get(opened.raw_path.decode())).cookies["podplane_space"])


def _socket(url: str, host: str, path: str, **headers: str) -> Any:
    """A browser's WebSocket to a space's host, reaching podplane's port on loopback."""
    where = httpx.URL(url)
    return ws_connect(f"ws://{host}:{where.port}{path}", host="127.0.0.1", port=where.port,
                      additional_headers=headers)


async def test_kernels_run_through_the_space_host_and_foreign_pages_cannot_open_them(
        cluster: tuple[Stack, str]) -> None:
    """JupyterLab's kernel socket, spliced through podplane and the API server's proxy to the
    space's server; refused without the session, from another origin (another space's
    pages), passed on as the server answers for a kernel it does not have, and closed once
    the token it was opened with is revoked."""
    stack, _ = cluster
    await _spaces_on(stack)
    cookie = f"podplane_space={await _space_session(stack, 'web', 'kernel-user')}"
    host, base = f"web.{CLUSTER}.localhost", f"/spaces/{CLUSTER}/web/"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=stack.app),
                                 base_url=f"http://{host}:3099",
                                 headers={"Cookie": cookie}) as browser:
        started = await browser.post(f"{base}api/kernels", json={"name": "python3"})
    assert started.status_code == 201, started.text
    channels = f"{base}api/kernels/{started.json()['id']}/channels?session_id=s1"
    async with serving(stack.app) as url:
        origin = f"http://{host}:{httpx.URL(url).port}"
        async with _socket(url, host, channels, Cookie=cookie, Origin=origin) as socket:
            got = await replies_to(socket, "print('from the gateway')")
            assert got[1]["content"]["text"] == "from the gateway\n", got
            # the token the space was opened with is revoked: its open socket is closed
            async with stack.client("admin") as api:
                assert (await api.delete("/api/v1/tokens/kernel-user")).status_code == 200
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(socket.recv(), 10)
        cookie = f"podplane_space={await _space_session(stack, 'web', 'kernel-user-2')}"
        other = f"http://nb.{CLUSTER}.localhost:{httpx.URL(url).port}"
        for headers, status in (({"Origin": origin}, 401), ({"Cookie": cookie}, 403),
                                ({"Cookie": cookie, "Origin": other}, 403)):
            with pytest.raises(InvalidStatus) as refused:
                async with _socket(url, host, channels, **headers):
                    pass
            assert refused.value.response.status_code == status, headers
        with pytest.raises(InvalidStatus) as refused:
            async with _socket(url, host, f"{base}api/kernels/none/channels", Cookie=cookie,
                               Origin=origin):
                pass
        assert refused.value.response.status_code == 404
