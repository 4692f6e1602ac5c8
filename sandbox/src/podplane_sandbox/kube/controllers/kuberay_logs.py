"""What KubeRay's pods print in the sandbox: `ray start` on the head and workers (it blocks
once the node runs), and on the submitter pod the output of `ray job submit --no-wait` then
`ray job logs --follow` (the Ray job CLI's banners: `Job '<id>' submitted successfully`,
`Job '<id>' succeeded|failed`), with the driver's own lines in between. A VERL driver
(`verl.trainer.main_ppo`) prints one line of metrics per training step the way VERL's console
logger does (volcengine/verl `verl/utils/logger/aggregate_logger.py`, `concat_dict_to_str`:
`step:<n> - <metric>:<value> - ...`)."""

from __future__ import annotations

import math
from typing import Any

from podplane_sandbox.kube.logs import TRAIN_EVERY, container_end

Obj = dict[str, Any]
RULE = "-" * 55


def lines(pod: Obj, c: Obj, kind: str, started: float, start: float,
          end: float) -> list[tuple[float, str]]:
    if kind == "ray-driver":
        return _driver(pod, c, started, end)
    ip = (pod.get("status") or {}).get("podIP", "")
    return [(started, f"Local node IP: {ip}"), (started + 1, RULE),
            (started + 1, "Ray runtime started."), (started + 1, RULE),
            (started + 1, "--block"),
            (started + 1, "  This command will now block forever until terminated by a "
                          "signal.")]


def _env(c: Obj, name: str) -> str:
    return next((str(e.get("value")) for e in c.get("env") or [] if e.get("name") == name), "")


def _driver(pod: Obj, c: Obj, started: float, end: float) -> list[tuple[float, str]]:
    from podplane_sandbox.kube.controllers.kuberay_rules import ENTRYPOINT_EXIT, PENDING_SECONDS

    job_id, address = _env(c, "RAY_JOB_SUBMISSION_ID"), _env(c, "RAY_DASHBOARD_ADDRESS")
    out = [(started, f"Job submission server address: http://{address}"),
           (started, RULE), (started, f"Job '{job_id}' submitted successfully"),
           (started, RULE)]
    running = started + PENDING_SECONDS
    finished = container_end(pod, c["name"])
    stop = min(end, finished) if finished is not None else end
    command = " ".join(c.get("args") or [])
    out.append((running, f"INFO worker.py -- Connecting to existing Ray cluster at address: "
                         f"{address.split(':')[0]}:6379..."))
    if "verl.trainer.main_ppo" in command:
        out += _verl(running, stop, "grpo" if "adv_estimator=grpo" in command else "gae")
    else:
        out += [(running + i * TRAIN_EVERY, f"driver heartbeat {i}")
                for i in range(1, max(1, math.ceil((stop - running) / TRAIN_EVERY)))]
    if finished is not None:
        code = int((pod["metadata"].get("annotations") or {}).get(ENTRYPOINT_EXIT, "0"))
        at = finished - 0.5
        if code:
            out += [(at, line) for line in traceback_lines(pod)]
        out += [(at, RULE), (at, f"Job '{job_id}' {'failed' if code else 'succeeded'}"),
                (at, RULE)]
    return out


def _verl(running: float, stop: float, estimator: str) -> list[tuple[float, str]]:
    critic = "no critic (group-relative advantages)" if estimator == "grpo" else "with critic"
    out = [(running, f"algorithm.adv_estimator={estimator}: {critic}")]
    steps = max(0, math.ceil((stop - running) / TRAIN_EVERY) - 1)
    for i in range(1, steps + 1):
        score = 0.2 + 0.6 * (1 - math.exp(-i / 40))
        metrics = [f"actor/pg_loss:{-0.01 * math.cos(i):.4f}",
                   f"actor/entropy:{0.9 * math.exp(-i / 200):.4f}",
                   f"critic/score/mean:{score:.4f}",
                   f"response_length/mean:{380 + (i * 37) % 90}",
                   f"timing_s/step:{TRAIN_EVERY:.1f}"]
        if estimator == "gae":
            metrics.insert(2, f"critic/vf_loss:{0.5 * math.exp(-i / 60):.4f}")
        out.append((running + i * TRAIN_EVERY, " - ".join([f"step:{i}", *metrics])))
    return out


def traceback_lines(pod: Obj) -> list[str]:
    from podplane_sandbox.kube.controllers.kuberay_rules import ENTRYPOINT_EXIT

    code = (pod["metadata"].get("annotations") or {}).get(ENTRYPOINT_EXIT, "0")
    return ["Traceback (most recent call last):",
            '  File "<entrypoint>", line 1, in <module>',
            f"RuntimeError: the entrypoint exited with code {code}"]
