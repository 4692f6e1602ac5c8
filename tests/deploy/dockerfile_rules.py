"""What the Dockerfile must keep true (issue 18), checked on its text: no builder runs here."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field


@dataclass
class Stage:
    name: str
    base: str
    lines: list[str] = field(default_factory=list)

    def instructions(self, keyword: str) -> list[str]:
        return [line.split(None, 1)[1] for line in self.lines
                if line.split(None, 1)[0].upper() == keyword]

    def env(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for args in self.instructions("ENV"):
            for word in shlex.split(args):
                key, _, value = word.partition("=")
                out[key] = value
        return out


def stages(text: str) -> list[Stage]:
    """Instructions (continuation lines joined, comments dropped) grouped by stage."""
    joined = re.sub(r"\\\n\s*", " ", "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")))
    out: list[Stage] = []
    for line in filter(None, (raw.strip() for raw in joined.splitlines())):
        match = re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?", line, re.I)
        if match:
            out.append(Stage(name=match.group(2) or "", base=match.group(1)))
        elif out:
            out[-1].lines.append(line)
    return out


def problems(text: str) -> list[str]:
    by_name = {s.name: s for s in stages(text)}
    found: list[str] = []
    final = stages(text)[-1]
    if final.name != "runtime" or final.base != "product":
        found.append("the default (last) stage is not runtime FROM product")
    product = by_name.get("product")
    if product is None:
        return found + ["no product stage"]
    env = product.env()
    want = {"PODPLANE_BACKEND": "aws", "PODPLANE_HOST": "0.0.0.0", "PODPLANE_HOME": "/data"}
    found += [f"product: ENV {k}={env.get(k)!r}, wants {v!r}" for k, v in want.items()
              if env.get(k) != v]
    users = product.instructions("USER")
    if not users or users[-1].split(":")[0] in ("0", "root"):
        found.append("product: runs as root")
    if not any(env.get("PODPLANE_HOME", "?") in v for v in product.instructions("VOLUME")):
        found.append("product: PODPLANE_HOME is not a volume")
    if not any("/api/v1/health" in h for h in product.instructions("HEALTHCHECK")):
        found.append("product: no HEALTHCHECK on /api/v1/health")
    if any("demo-build" in c for c in product.instructions("COPY")):
        found.append("product: copies the demo's venv (the sandbox)")
    for stage in (by_name.get("build"), product, final):
        if stage is not None and any("sandbox" in r for r in stage.instructions("RUN")
                                     + stage.instructions("COPY")):
            found.append(f"{stage.name}: installs or copies the sandbox")
    demo = by_name.get("demo")
    if demo is None or demo.env().get("PODPLANE_BACKEND") != "sandbox":
        found.append("no demo stage running the sandbox")
    return found
