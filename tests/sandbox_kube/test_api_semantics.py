"""API-server semantics over HTTP: conflicts, expired watches, bookmarks, pagination, Table
output, deletion (finalizers, foreground, orphan), subresources, auth."""

from __future__ import annotations

import json
import ssl
from typing import Any

import httpx

from tests.sandbox_kube.conftest import Sandbox

CM = "/api/v1/namespaces/default/configmaps"


def _cm(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": {"k": "v"},
    }


def test_stale_update_conflicts(http: httpx.Client) -> None:
    created = http.post(CM, json=_cm("rv")).json()
    http.patch(
        f"{CM}/rv",
        json={"data": {"k": "2"}},
        headers={"Content-Type": "application/merge-patch+json"},
    ).raise_for_status()
    stale = http.put(f"{CM}/rv", json=created)
    assert stale.status_code == 409
    assert stale.json()["reason"] == "Conflict" and stale.json()["kind"] == "Status"
    dup = http.post(CM, json=_cm("rv"))
    assert dup.status_code == 409 and dup.json()["reason"] == "AlreadyExists"
    missing = http.get(f"{CM}/nope")
    assert missing.status_code == 404 and missing.json()["message"] == 'configmaps "nope" not found'


def test_pagination_with_limit_and_continue(http: httpx.Client) -> None:
    http.post("/api/v1/namespaces", json={"metadata": {"name": "pages"}}).raise_for_status()
    for i in range(7):
        http.post(
            "/api/v1/namespaces/pages/configmaps", json=_cm(f"c{i}", labels={"n": str(i % 2)})
        ).raise_for_status()
    names, token = [], ""
    while True:
        page = http.get(
            "/api/v1/namespaces/pages/configmaps", params={"limit": 3, "continue": token}
        ).json()
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert names == [f"c{i}" for i in range(7)]
    odd = http.get("/api/v1/namespaces/pages/configmaps", params={"labelSelector": "n!=0"})
    assert [i["metadata"]["name"] for i in odd.json()["items"]] == ["c1", "c3", "c5"]
    by_field = http.get("/api/v1/configmaps", params={"fieldSelector": "metadata.name=c4"})
    assert [i["metadata"]["namespace"] for i in by_field.json()["items"]] == ["pages"]


def test_watch_bookmark_and_expired_version(sandbox: Sandbox, http: httpx.Client) -> None:
    rv = http.get(CM).json()["metadata"]["resourceVersion"]
    http.post(CM, json=_cm("watched")).raise_for_status()
    with http.stream(
        "GET", CM, params={"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true"}
    ) as resp:
        lines = resp.iter_lines()
        first = json.loads(next(lines))
        bookmark = json.loads(next(lines))
    assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "watched"
    assert bookmark["type"] == "BOOKMARK"
    assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= int(rv)
    sandbox.api.store.compacted_rv = sandbox.api.store.rv  # as after a compaction
    with http.stream("GET", CM, params={"watch": "true", "resourceVersion": rv}) as resp:
        event = json.loads(next(resp.iter_lines()))
    assert event["type"] == "ERROR" and event["object"]["code"] == 410


def test_table_output_for_pods_and_crd_columns(sandbox: Sandbox, http: httpx.Client) -> None:
    table = http.get(
        "/api/v1/nodes", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    ).json()
    assert table["kind"] == "Table"
    cols = [c["name"] for c in table["columnDefinitions"]]
    assert cols[:5] == ["Name", "Status", "Roles", "Age", "Version"]
    assert {r["cells"][1] for r in table["rows"]} == {"Ready"}
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_finalizers_and_foreground_deletion(sandbox: Sandbox, http: httpx.Client) -> None:
    http.post(CM, json=_cm("held", finalizers=["example.com/hold"])).raise_for_status()
    deleting = http.delete(f"{CM}/held").json()
    assert deleting["metadata"]["deletionTimestamp"]
    assert http.get(f"{CM}/held").status_code == 200
    http.patch(
        f"{CM}/held",
        json={"metadata": {"finalizers": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    ).raise_for_status()
    assert http.get(f"{CM}/held").status_code == 404

    owner = http.post(CM, json=_cm("owner")).json()
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    http.post(CM, json=_cm("child", ownerReferences=[ref])).raise_for_status()
    http.post(CM, json=_cm("orphan-child", ownerReferences=[ref])).raise_for_status()
    http.request(
        "DELETE", f"{CM}/owner", json={"propagationPolicy": "Foreground"}
    ).raise_for_status()
    sandbox.settle()
    assert http.get(f"{CM}/owner").status_code == 404
    assert http.get(f"{CM}/child").status_code == 404

    owner2 = http.post(CM, json=_cm("owner2")).json()
    ref["uid"], ref["name"] = owner2["metadata"]["uid"], "owner2"
    http.post(CM, json=_cm("kept", ownerReferences=[ref])).raise_for_status()
    http.delete(f"{CM}/owner2", params={"propagationPolicy": "Orphan"}).raise_for_status()
    sandbox.settle()
    kept = http.get(f"{CM}/kept").json()
    assert kept["metadata"].get("ownerReferences") == []


def test_status_subresource_is_separate(sandbox: Sandbox, http: httpx.Client) -> None:
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "sub"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
            },
        },
    }
    base = "/apis/apps/v1/namespaces/default/deployments"
    http.post(base, json=dep).raise_for_status()
    sandbox.settle()
    sneaky = http.patch(
        f"{base}/sub",
        json={"status": {"replicas": 99}},
        headers={"Content-Type": "application/merge-patch+json"},
    ).json()
    assert sneaky["status"].get("replicas", 0) == 0
    via_status = http.patch(
        f"{base}/sub/status",
        json={"status": {"replicas": 7}},
        headers={"Content-Type": "application/merge-patch+json"},
    ).json()
    assert via_status["status"]["replicas"] == 7
    scale = http.get(f"{base}/sub/scale").json()
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 0


def test_strategic_merge_and_json_patch(http: httpx.Client) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "smp"},
        "spec": {
            "nodeName": "nowhere",
            "containers": [
                {
                    "name": "a",
                    "image": "busybox:1.36",
                    "env": [{"name": "X", "value": "1"}],
                    "volumeMounts": [{"name": "v", "mountPath": "/data"}],
                },
                {"name": "b", "image": "nginx:1.27"},
            ],
            "tolerations": [{"key": "k1", "operator": "Exists"}],
        },
    }
    http.post("/api/v1/namespaces/default/pods", json=pod).raise_for_status()
    patch = {
        "spec": {
            "containers": [
                {
                    "name": "a",
                    "env": [{"name": "Y", "value": "2"}],
                    "volumeMounts": [{"name": "w", "mountPath": "/w"}],
                }
            ],
            "tolerations": [{"key": "k2", "operator": "Exists"}],
        }
    }
    out = http.patch(
        "/api/v1/namespaces/default/pods/smp",
        json=patch,
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    ).json()
    a = out["spec"]["containers"][0]
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "b"]
    assert [e["name"] for e in a["env"]] == ["X", "Y"]
    assert [m["mountPath"] for m in a["volumeMounts"]] == ["/data", "/w"]
    assert [t["key"] for t in out["spec"]["tolerations"]] == ["k1", "k2"]
    ops = [
        {"op": "remove", "path": "/spec/containers/1"},
        {"op": "test", "path": "/spec/containers/0/name", "value": "a"},
    ]
    out = http.patch(
        "/api/v1/namespaces/default/pods/smp",
        json=ops,
        headers={"Content-Type": "application/json-patch+json"},
    ).json()
    assert [c["name"] for c in out["spec"]["containers"]] == ["a"]
    failed = http.patch(
        "/api/v1/namespaces/default/pods/smp",
        json=[{"op": "test", "path": "/spec/containers/0/name", "value": "zzz"}],
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert failed.status_code == 422


def test_auth_rejects_missing_and_malformed_tokens(sandbox: Sandbox) -> None:
    ca = ssl.create_default_context(cafile=str(sandbox.state_dir / "kube-ca.crt"))
    for header in (
        {},
        {"Authorization": "Bearer abc"},
        {"Authorization": "Bearer k8s-aws-v1.aHR0cHM6Ly9leGFtcGxlLmNvbS8"},
    ):
        resp = httpx.get(sandbox.api.endpoint + "/api/v1/pods", headers=header, verify=ca)
        assert resp.status_code == 401 and resp.json()["reason"] == "Unauthorized"
    ok = httpx.get(sandbox.api.endpoint + "/version", verify=ca)
    assert ok.status_code == 200


def test_pod_log_options(sandbox: Sandbox, http: httpx.Client) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "two"},
        "spec": {
            "containers": [
                {"name": "trainer", "image": "nvcr.io/nvidia/nemo:24.05"},
                {"name": "sidecar", "image": "fluent/fluent-bit:3.2"},
            ]
        },
    }
    http.post("/api/v1/namespaces/default/pods", json=pod).raise_for_status()
    sandbox.settle()
    waiting = http.get("/api/v1/namespaces/default/pods/two/log", params={"container": "trainer"})
    assert waiting.status_code == 400 and "waiting to start" in waiting.json()["message"]
    sandbox.advance(62)
    base = "/api/v1/namespaces/default/pods/two/log"
    which = http.get(base)
    assert which.status_code == 400 and "choose one of: [trainer sidecar]" in which.text
    full = http.get(base, params={"container": "trainer"}).text.splitlines()
    assert full[-1].startswith("[rank 0] step 120 | loss")
    assert (
        http.get(base, params={"container": "trainer", "tailLines": 2}).text.splitlines()
        == full[-2:]
    )
    recent = http.get(base, params={"container": "trainer", "sinceSeconds": 6}).text
    assert [line.split()[3] for line in recent.splitlines()] == ["110", "120"]
    stamped = http.get(base, params={"container": "sidecar", "timestamps": "true"}).text
    assert stamped.split()[0].endswith("Z") and "starting fluent/fluent-bit:3.2" in stamped
    previous = http.get(base, params={"container": "trainer", "previous": "true"})
    assert previous.status_code == 400 and "previous terminated container" in previous.text


def test_builtin_validation_uses_api_field_paths(http: httpx.Client) -> None:
    bad_name = http.post(CM, json=_cm("Not_Valid"))
    assert bad_name.status_code == 422
    assert bad_name.json()["details"]["causes"][0]["field"] == "metadata.name"
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "mismatch"},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "b"}},
                "spec": {"containers": [{"name": "c"}]},
            },
        },
    }
    resp = http.post("/apis/apps/v1/namespaces/default/deployments", json=dep)
    assert resp.status_code == 422
    fields = {c["field"] for c in resp.json()["details"]["causes"]}
    assert fields == {"spec.template.metadata.labels", "spec.template.spec.containers[0].image"}
    assert resp.json()["message"].startswith('Deployment.apps "mismatch" is invalid: ')
    _sub_paths_descend(http)


def _sub_paths_descend(http: httpx.Client) -> None:
    """kubernetes pkg/apis/core/validation `ValidateVolumeMounts` ->
    `validateLocalDescendingPath`: a subPath with a `..` element or an absolute one is 422
    Invalid (the field has no mount index, as upstream builds it); `.` and `a..b` pass."""
    def pod(name: str, *sub_paths: str) -> dict[str, Any]:
        mounts = [{"name": "data", "mountPath": f"/m{i}", "subPath": sub}
                  for i, sub in enumerate(sub_paths)]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"volumes": [{"name": "data", "emptyDir": {}}],
                         "containers": [{"name": "c", "image": "busybox:1.36",
                                         "volumeMounts": mounts}]}}

    pods = "/api/v1/namespaces/default/pods"
    up = http.post(pods, json=pod("up", "models/.."))
    assert up.status_code == 422 and up.json()["reason"] == "Invalid", up.text
    assert up.json()["details"]["causes"] == [{
        "field": "spec.containers[0].volumeMounts.subPath", "reason": "FieldValueInvalid",
        "message": "Invalid value: \"models/..\": must not contain '..'"}]
    assert up.json()["message"] == ('Pod "up" is invalid: spec.containers[0].volumeMounts.'
                                    "subPath: Invalid value: \"models/..\": must not contain "
                                    "'..'")
    rooted = http.post(pods, json=pod("rooted", "/etc"))
    assert [c["message"] for c in rooted.json()["details"]["causes"]] == [
        'Invalid value: "/etc": must be a relative path']
    fine = http.post(pods, json=pod("fine", ".", "a..b/c", "models/x"))
    assert fine.status_code == 201, fine.text
    http.delete(f"{pods}/fine").raise_for_status()


def test_watch_with_selector_sees_objects_enter_and_leave(http: httpx.Client) -> None:
    rv = http.get(CM).json()["metadata"]["resourceVersion"]
    http.post(CM, json=_cm("mover", labels={"stage": "a"})).raise_for_status()
    merge = {"Content-Type": "application/merge-patch+json"}
    http.patch(f"{CM}/mover", json={"metadata": {"labels": {"stage": "b"}}}, headers=merge)
    http.patch(f"{CM}/mover", json={"metadata": {"labels": {"stage": "a"}}}, headers=merge)
    params = {
        "watch": "true",
        "resourceVersion": rv,
        "labelSelector": "stage=b",
        "timeoutSeconds": "1",
    }
    with http.stream("GET", CM, params=params) as resp:
        events = [json.loads(line) for line in resp.iter_lines() if line]
    assert [(e["type"], e["object"]["metadata"]["labels"]["stage"]) for e in events] == [
        ("ADDED", "b"),
        ("DELETED", "a"),
    ]


def test_aggregated_discovery_when_asked(http: httpx.Client) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    resp = http.get("/apis", headers={"Accept": accept})
    assert resp.headers["content-type"].startswith("application/json;g=apidiscovery.k8s.io")
    groups = {g["metadata"]["name"]: g for g in resp.json()["items"]}
    deploy = next(
        r for r in groups["apps"]["versions"][0]["resources"] if r["resource"] == "deployments"
    )
    assert deploy["shortNames"] == ["deploy"] and deploy["scope"] == "Namespaced"
    assert {s["subresource"] for s in deploy["subresources"]} == {"status", "scale"}
    core = http.get("/api", headers={"Accept": accept}).json()["items"]
    assert [g["metadata"]["name"] for g in core] == [""]
    plain = http.get("/apis").json()
    assert plain["kind"] == "APIGroupList"
