"""A warm parent for crash sweeps: `python -m podplane_testkit.warm` imports the control plane
once, then forks one `podplane serve` per line it reads on stdin, so a restart after a crash
point costs a fork instead of seconds of imports (measured with py-spy: nearly all of a
start is importing the app, the MCP SDK and the CLI).

Protocol, one JSON object per line: in {"env": {...}, "log": path, "args": [...]}; out
{"pid": n} when the child runs, then {"exit": code} when it ended (negative: the signal).
The parent starts no thread and no event loop before forking, so each child starts clean.
"""

from __future__ import annotations

import json
import os
import sys


def _child(request: dict[str, object]) -> None:
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
    log = os.open(str(request["log"]), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    from podplane.cli.main import app

    try:
        app(list(request["args"]), prog_name="podplane")  # type: ignore[call-overload]
    except SystemExit as done:
        os._exit(done.code if isinstance(done.code, int) else 1)
    os._exit(0)


def main() -> None:
    import podplane.api.app  # noqa: F401  (the heavy imports, once)
    import podplane.bootstrap  # noqa: F401
    import podplane.cli.main  # noqa: F401
    import podplane.server  # noqa: F401

    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        out.write(json.dumps({"pid": pid}) + "\n")
        out.flush()
        _, status = os.waitpid(pid, 0)
        out.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
