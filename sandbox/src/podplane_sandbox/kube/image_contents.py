"""Images have contents: which executables a public image tag puts on its PATH, and what a
container asked to run something its image lacks gets from the runtime (pure functions).

An image missing from `EXECUTABLES` runs whatever it is asked (the sandbox cannot know its
contents). A known image asked to exec a program it does not have:

- as the container's own process (`command[0]`, or after `env NAME=V`): runc cannot exec it,
  so the container never starts. containerd on EKS reports it as the container's last state
  terminated, reason `StartError`, exit code 128, message `failed to create containerd task:
  failed to create shim task: OCI runtime create failed: runc create failed: unable to start
  container process: exec: "<x>": executable file not found in $PATH: unknown`, then
  `CrashLoopBackOff` (public reports of exactly that text and state: k3s-io/helm-controller#250,
  minio/operator#2106, kubesphere-sigs/ks-devops-helm-chart#141; runc `libcontainer`'s
  `exec: %q: executable file not found in $PATH`, opencontainers/runc#591). `env` itself
  prints `env: '<x>': No such file or directory` and exits 127 (GNU coreutils `env`).
- inside `sh -c SCRIPT`: the shell runs and reports `sh: 1: <x>: not found` (dash, the
  `/bin/sh` of the Ubuntu-based images below; bash: `bash: line 1: <x>: command not found`),
  exit status 127 (POSIX "Command Search and Execution"). `a && b` stops at the first failure,
  `a; b` goes on, and the script's status is its last command's.
- `pip install PKG...` (or `python -m pip install`) earlier in the same script adds PKG's
  console scripts for the rest of that script (`CONSOLE_SCRIPTS`: each package's own
  `[project.scripts]`). Whether the node can reach PyPI is not judged here.
Scripts with other shell syntax (pipes, redirections, `$(...)`, `if`/`for`, subshells) are not
analysed: they run as asked.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from podplane_sandbox.kube import launchers
from podplane_sandbox.kube.controllers.images import normalise

Obj = dict[str, Any]

# What every Ubuntu/Debian-based image below has: dash as /bin/sh, bash, coreutils, findutils,
# grep, sed (the distributions' essential packages)
BASE = frozenset({"sh", "bash", "dash", "env", "cat", "cp", "mv", "rm", "ls", "mkdir", "ln",
                  "echo", "printf", "sleep", "true", "false", "test", "[", "touch", "chmod",
                  "head", "tail", "tee", "wc", "sort", "date", "id", "uname", "find", "grep",
                  "sed", "xargs", "dirname", "basename", "readlink", "nproc", "timeout"})
PYTHON = frozenset({"python", "python3", "pip", "pip3"})
# the torch wheel's console scripts (pytorch setup.py `entry_points`)
TORCH = frozenset({"torchrun", "torchfrtrace"})
HF = frozenset({"huggingface-cli"})  # huggingface_hub's CLI (a transformers/vLLM dependency)

EXECUTABLES: dict[str, frozenset[str]] = {
    # pytorch/pytorch Dockerfile (repository root): Ubuntu 22.04 with a conda env in /opt/conda
    # (python, pip, conda) and the torch wheel; the devel tag adds the CUDA toolkit
    "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime": BASE | PYTHON | TORCH | {"conda"},
    "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel": BASE | PYTHON | TORCH
    | {"conda", "nvcc"},
    # hiyouga/LLaMA-Factory docker/docker-cuda/Dockerfile: `pip install -e .` (setup.py
    # console_scripts `llamafactory-cli`, `lmf`) on a PyTorch base
    "docker.io/hiyouga/llamafactory:latest": BASE | PYTHON | TORCH | HF
    | {"llamafactory-cli", "lmf", "deepspeed"},
    # modelscope/ms-swift's published image (docs "SWIFT-installation", "Mirror"): ms-swift
    # 3.8.3 (setup.py console_scripts `swift`, `megatron`), torch 2.7.1, vLLM 0.10.1.1
    "modelscope-registry.us-west-1.cr.aliyuncs.com/modelscope-repo/modelscope:ubuntu22.04-"
    "cuda12.6.3-py311-torch2.7.1-vllm0.10.1.1-modelscope1.29.2-swift3.8.3": BASE | PYTHON | TORCH
    | HF | {"swift", "megatron", "vllm", "modelscope"},
    # vllm-project/vllm docker/Dockerfile, target vllm-openai: Python with pip, the vllm wheel
    # (console script `vllm`) and its dependencies; ENTRYPOINT python3 -m
    # vllm.entrypoints.openai.api_server
    "docker.io/vllm/vllm-openai:v0.9.0": BASE | PYTHON | TORCH | HF | {"vllm", "uv"},
    # sgl-project/sglang docker/Dockerfile: pip install sglang[all] on a CUDA devel base
    "docker.io/lmsysorg/sglang:v0.4.6.post5-cu124": BASE | PYTHON | TORCH | HF,
    # ray-project/ray docker/ray-llm (ray-ml base): conda Python with ray[all] and vLLM
    "docker.io/rayproject/ray-llm:2.56.0-py312-cu130": BASE | PYTHON | TORCH | HF
    | {"ray", "serve", "vllm", "conda"},
}
# hyperpod-elastic-agent's pyproject `[project.scripts]` (sdist 1.1.3 on PyPI,
# pypi.org/project/hyperpod-elastic-agent: "you must first install the HyperPod elastic agent
# into your training image")
CONSOLE_SCRIPTS: dict[str, frozenset[str]] = {
    "hyperpod-elastic-agent": frozenset({"hyperpodrun"}),
}
# shell builtins and special words (POSIX "Special Built-In Utilities" and dash's builtins)
BUILTINS = frozenset({":", ".", "cd", "echo", "eval", "exec", "exit", "export", "false",
                      "printf", "pwd", "read", "readonly", "return", "set", "shift", "test",
                      "[", "trap", "true", "umask", "ulimit", "unset", "wait", "command",
                      "type", "hash", "source", "local", "alias"})
BIN_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/opt/conda/bin/")
SHELLS = ("sh", "bash")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
NOT_FOUND = 127
START_ERROR = 128
RUNC = ("failed to create containerd task: failed to create shim task: OCI runtime create "
        "failed: runc create failed: unable to start container process: ")


@dataclass(frozen=True)
class StartFailure:
    """How a container that could not run its program ends."""

    exit_code: int
    reason: str   # the terminated state's reason: StartError (runc) or Error (a shell's 127)
    message: str  # the terminated state's message (StartError only)
    log: str      # what the container printed before it exited

    @property
    def started(self) -> bool:
        return self.reason != "StartError"


def executables(image: str) -> frozenset[str] | None:
    """What the image has on its PATH, or None when the sandbox does not know the image."""
    repo, tag = normalise(image)
    return EXECUTABLES.get(f"{repo}:{tag}")


def start_failure(container: Obj) -> StartFailure | None:
    """How the container fails to run its command in its image, or None (it runs)."""
    have = executables(str(container.get("image", "")))
    if have is None:
        return None
    if not container.get("command"):  # the image's own ENTRYPOINT runs, `args` its CMD
        return None  # (Kubernetes docs, "Define a Command and Arguments for a Container")
    env = launchers.environment(container)
    argv = [launchers.expand(str(a), env) for a in
            [*(container.get("command") or []), *(container.get("args") or [])]]
    return _exec(argv, have)


def first_failure(pod: Obj) -> tuple[str, StartFailure] | None:
    """(container, failure) for the first container of the pod that cannot run."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        failure = start_failure(container)
        if failure is not None:
            return container["name"], failure
    return None


def failure_of(pod: Obj, name: str) -> StartFailure | None:
    for container in (pod.get("spec") or {}).get("containers") or []:
        if container.get("name") == name:
            return start_failure(container)
    return None


def _has(program: str, have: Collection[str]) -> bool:
    """A bare name is searched on PATH; a path in a system bin directory is the image's; any
    other path (a mounted volume, the image's own files) is taken as present."""
    if "/" not in program:
        return program in have
    return not program.startswith(BIN_DIRS) or program.rsplit("/", 1)[-1] in have


def _exec(argv: list[str], have: frozenset[str]) -> StartFailure | None:
    if not _has(argv[0], have):
        return StartFailure(START_ERROR, "StartError",
                            f'{RUNC}exec: "{argv[0]}": executable file not found in $PATH: '
                            "unknown", "")
    program = argv[0].rsplit("/", 1)[-1]
    if program == "env":
        rest = argv[1:]
        while rest and "=" in rest[0] and not rest[0].startswith("-"):
            rest = rest[1:]
        if rest and not rest[0].startswith("-") and not _has(rest[0], have):
            return StartFailure(NOT_FOUND, "Error", "",
                                f"env: '{rest[0]}': No such file or directory")
        return None
    script = launchers.shell_script(argv)
    return None if script is None else _script(script, program, have)


def _script(script: str, shell: str, have: frozenset[str]) -> StartFailure | None:
    """The shell's own verdict on a simple script: the status of its last command run."""
    commands = launchers.simple_commands(script)
    if commands is None:
        return None
    found, status, skipping, said = set(have), 0, False, []
    for joiner, words in commands:
        if joiner == ";":
            skipping = False
        if skipping:
            continue
        missing = _missing(words, found)
        if missing is None:
            status = 0
            found |= _installed(words)
        else:
            status = NOT_FOUND
            said.append(f"sh: 1: {missing}: not found" if shell == "sh"
                        else f"bash: line 1: {missing}: command not found")
            skipping = True  # `&&` after a failure runs nothing until the next `;`
    return StartFailure(NOT_FOUND, "Error", "", "\n".join(said)) if status else None


def _missing(words: list[str], have: set[str]) -> str | None:
    """The word the shell cannot find (`exec: x` for exec), or None."""
    while words and ASSIGNMENT.fullmatch(words[0]):  # `NAME=value cmd`
        words = words[1:]
    if not words:
        return None
    if words[0] == "exec" and len(words) > 1:
        return None if _has(words[1], have) else f"exec: {words[1]}"
    if words[0] in BUILTINS or _has(words[0], have):
        return None
    return words[0]


def _installed(words: list[str]) -> set[str]:
    """The console scripts a `pip install` command line adds."""
    if words[:1] == ["exec"]:
        words = words[1:]
    name = words[0].rsplit("/", 1)[-1] if words else ""
    if name.startswith("python") and words[1:3] == ["-m", "pip"]:
        words = ["pip", *words[3:]]
    elif name not in ("pip", "pip3"):
        return set()
    if words[1:2] != ["install"]:
        return set()
    added: set[str] = set()
    for arg in words[2:]:
        if arg.startswith("-"):
            continue
        package = re.split(r"[=<>!~\[;@ ]", arg, maxsplit=1)[0].lower().replace("_", "-")
        added |= CONSOLE_SCRIPTS.get(package, frozenset())
    return added
