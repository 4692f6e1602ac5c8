"""Distributed launchers, emulated from their sources: how many nodes a container's launcher
joins, as which node, with how many worker processes, from only what that launcher reads.

A training operator hands its pods the rendezvous through environment variables; a launcher
takes from them only what its own source reads (pure functions of the container spec):

- The container's environment is what the kubelet makes of `env`: literal values, each
  `$(VAR)` expanded from the variables defined before it, `$$` an escaped `$`, an unknown
  reference left as written (kubernetes/kubernetes `pkg/kubelet/kubelet_pods.go`
  `makeEnvironmentVariables`, `third_party/forked/golang/expansion/expand.go`). `command` and
  `args` expand the same way from the whole environment (Kubernetes docs, "Define a Command and
  Arguments for a Container": "use environment variables to define arguments").
- `env NAME=VALUE ... CMD ...` runs CMD with those variables added (coreutils `env`).
- `sh|bash -c SCRIPT`: the script's last simple command runs the launcher (`exec` stripped;
  commands split at newlines, `;` and `&&`, `simple_commands`); shell variables in it are not
  expanded (the sandbox's simplification).
- `torchrun` / `python -m torch.distributed.run`: `--nnodes`, `--node-rank`, `--nproc-per-node`
  (or their `_` spellings, `--x=v` or `--x v`); a flag not given is read from `PET_<DEST>`
  before its default: nnodes 1, node rank 0, nproc 1 (pytorch `torch/distributed/run.py`
  `get_args_parser`, `torch/distributed/argparse_util.py` `env`). `nnodes` `min:max` counts
  max; `nproc` `gpu`/`auto` is the container's GPUs (`determine_local_world_size`).
- `llamafactory-cli train` runs torchrun only with `FORCE_TORCHRUN` on (`true`, `y`, `1`) or
  more than one GPU, and then passes `--nnodes $NNODES` (default 1) `--node_rank $NODE_RANK`
  (default 0) `--nproc_per_node $NPROC_PER_NODE` (default the GPUs) explicitly, so torchrun's
  `PET_*` never count; otherwise it trains in one process (hiyouga/LLaMA-Factory
  `src/llamafactory/launcher.py` `launch`, `extras/misc.py` `is_env_enabled`).
- `swift pt|sft|rlhf|infer` runs torchrun only when `NPROC_PER_NODE` or `NNODES` is set, and
  passes only those of `NPROC_PER_NODE`, `MASTER_PORT`, `NNODES`, `NODE_RANK`, `MASTER_ADDR`
  that are set (torchrun reads the rest as above); otherwise one process (modelscope/ms-swift
  v3.8.3 `swift/cli/main.py` `use_torchrun`, `get_torchrun_args`, `cli_main`).
Anything else is not a launcher the sandbox knows (None): the operator's own bookkeeping, if
any, decides (logs.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from podplane_sandbox.kube.util import quantity

Obj = dict[str, Any]
GPU = "nvidia.com/gpu"
REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
SHELLS = ("sh", "bash")
TORCHRUN_SWITCHES = {"standalone", "m", "module", "no-python", "no_python", "run-path",
                     "run_path"}  # its options that take no value
TORCHRUN_FLAGS = {"nnodes": "nnodes", "node-rank": "node_rank", "node_rank": "node_rank",
                  "nproc-per-node": "nproc_per_node", "nproc_per_node": "nproc_per_node"}
SWIFT_TORCHRUN = ("pt", "sft", "rlhf", "infer")
SWIFT_ENV = ("NPROC_PER_NODE", "MASTER_PORT", "NNODES", "NODE_RANK", "MASTER_ADDR")


@dataclass(frozen=True)
class Ranks:
    """What one pod's launcher joins: node `node_rank` of `nnodes`, `nproc` processes each."""

    node_rank: int
    nnodes: int
    nproc: int

    @property
    def first_rank(self) -> int:
        return self.node_rank * self.nproc

    @property
    def world(self) -> int:
        return self.nnodes * self.nproc


ALONE = Ranks(0, 1, 1)


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion: known references replaced, `$$` -> `$`, others kept."""
    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return REFERENCE.sub(one, text)


def environment(container: Obj) -> dict[str, str]:
    """The literal `env` values as the kubelet sets them (`valueFrom` is not read here)."""
    env: dict[str, str] = {}
    for var in container.get("env") or []:
        if "value" in var:
            env[var["name"]] = expand(str(var["value"]), env)
    return env


def gpus(container: Obj) -> int:
    res = container.get("resources") or {}
    return int(quantity({**(res.get("requests") or {}), **(res.get("limits") or {})}
                        .get(GPU, 0)))


def ranks(container: Obj) -> Ranks | None:
    """The container's launcher's view of the job, or None when it runs no known launcher."""
    env = environment(container)
    argv = [expand(str(a), env) for a in
            [*(container.get("command") or []), *(container.get("args") or [])]]
    return _launch(argv, env, gpus(container))


def _launch(argv: list[str], env: dict[str, str], devices: int) -> Ranks | None:
    if not argv:
        return None
    program = argv[0].rsplit("/", 1)[-1]
    if program == "env":
        return _env_command(argv[1:], env, devices)
    script = shell_script(argv)
    if script is not None:
        return _script(script, env, devices)
    if program == "torchrun":
        return torchrun(argv[1:], env, devices)
    if program.startswith("python") and argv[1:3] == ["-m", "torch.distributed.run"]:
        return torchrun(argv[3:], env, devices)
    if program == "llamafactory-cli":
        return _llamafactory(argv[1:], env, devices)
    if program == "swift":
        return _swift(argv[1:], env, devices)
    return None


def shell_script(argv: list[str]) -> str | None:
    """The command string of `sh|bash -c [--] SCRIPT`: the first operand after `-c` (and an
    optional `--`, the end of options) (POSIX `sh`, "-c"; KubeRay runs `/bin/bash -c -- ...`)."""
    if argv[0].rsplit("/", 1)[-1] not in SHELLS or argv[1:2] != ["-c"]:
        return None
    rest = argv[3:] if argv[2:3] == ["--"] else argv[2:]
    return rest[0] if rest else None


def _env_command(argv: list[str], env: dict[str, str], devices: int) -> Ranks | None:
    added = dict(env)
    while argv and "=" in argv[0] and not argv[0].startswith("-"):
        name, _, value = argv[0].partition("=")
        added[name] = value
        argv = argv[1:]
    return _launch(argv, added, devices)


def _script(script: str, env: dict[str, str], devices: int) -> Ranks | None:
    commands = simple_commands(script)
    if not commands:
        lines = [line.strip() for line in script.splitlines() if line.strip()]
        try:  # other shell syntax: the last line's words, as before
            commands = [(";", shlex.split(lines[-1]))] if lines else []
        except ValueError:
            return None
    if not commands:
        return None
    words = commands[-1][1]
    return _launch(words[1:] if words[:1] == ["exec"] else words, env, devices)


JOINERS = ("&&", ";")
SYNTAX = re.compile(r"^(if|then|else|elif|fi|for|while|until|do|done|case|esac|function|"
                    r"\{|\}|!)$")


def simple_commands(script: str) -> list[tuple[str, list[str]]] | None:
    """A script of simple commands joined by newlines, `;` and `&&`, as (joiner before it,
    words); None for any other shell syntax (pipes, `||`, redirections, `$(...)`, compound
    commands, background jobs), which the sandbox does not interpret."""
    if "`" in script or "$(" in script:
        return None
    out: list[tuple[str, list[str]]] = []
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # a quote that spans lines
            return None
        joiner, words = ";", []
        for token in [*tokens, ";"]:
            if token in JOINERS:
                if words:
                    out.append((joiner, words))
                elif token == "&&":
                    return None
                joiner, words = token, []
            elif set(token) & set(";&|<>()") or (not words and SYNTAX.match(token)):
                return None
            else:
                words.append(token)
    return out


def torchrun(args: list[str], env: dict[str, str], devices: int) -> Ranks:
    """torchrun's own resolution: a flag given, else `PET_<DEST>`, else its default."""
    given = _torchrun_flags(args)

    def read(dest: str, default: str) -> str:
        return given.get(dest, env.get(f"PET_{dest.upper()}", default))

    nnodes = read("nnodes", "1").rsplit(":", 1)[-1]
    nproc = read("nproc_per_node", "1")
    if nproc in ("gpu", "auto"):
        local = devices or 1
    else:
        local = int(nproc) if nproc.isdigit() else 1
    return Ranks(int(read("node_rank", "0")), int(nnodes) if nnodes.isdigit() else 1, local)


def _torchrun_flags(args: list[str]) -> dict[str, str]:
    """The launcher's options before the training script (its first positional argument)."""
    given: dict[str, str] = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        flag, eq, value = args[i].lstrip("-").partition("=")
        if not eq and flag not in TORCHRUN_SWITCHES and i + 1 < len(args):
            value, i = args[i + 1], i + 1
        if flag in TORCHRUN_FLAGS:
            given[TORCHRUN_FLAGS[flag]] = value
        i += 1
    return given


def _llamafactory(args: list[str], env: dict[str, str], devices: int) -> Ranks:
    forced = env.get("FORCE_TORCHRUN", "0").lower() in ("true", "y", "1")
    if args[:1] != ["train"] or not (forced or devices > 1):
        return ALONE
    return torchrun(["--nnodes", env.get("NNODES", "1"),
                     "--node_rank", env.get("NODE_RANK", "0"),
                     "--nproc_per_node", env.get("NPROC_PER_NODE", str(devices))],
                    env, devices)


def _swift(args: list[str], env: dict[str, str], devices: int) -> Ranks:
    if args[:1] == [] or args[0].replace("_", "-") not in SWIFT_TORCHRUN or \
            ("NPROC_PER_NODE" not in env and "NNODES" not in env):
        return ALONE
    flags = [part for key in SWIFT_ENV if key in env
             for part in (f"--{key.lower()}", env[key])]
    return torchrun(flags, env, devices)
