"""The training scripts' ConfigMap of a job (domain/jobs/scripts.py): read from the installed
package, applied before the job and owned by it once it exists, deleted with it."""

from __future__ import annotations

import contextlib
from importlib import resources
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import NotFound
from podplane.domain.jobs import scripts
from podplane.domain.jobs.kinds import NAMESPACE
from podplane.domain.jobs.recipes import Recipe

PACKAGE_DIR = "training_scripts"


def files(recipe: Recipe) -> dict[str, str]:
    """The recipe's scripts, as shipped in the package (package data)."""
    folder = resources.files("podplane") / PACKAGE_DIR
    return {name: (folder / name).read_text(encoding="utf-8") for name in recipe.scripts}


async def apply(kube: KubePort, recipe: Recipe | None, job: str,
                owner: dict[str, Any] | None = None) -> None:
    """Apply the job's ConfigMap (server-side apply: a resumed step changes nothing); your own
    workload (no recipe) has none."""
    if recipe is not None and recipe.scripts:
        await kube.apply(scripts.config_map(job, recipe.name, files(recipe), owner),
                         force=True)


async def delete(kube: KubePort, job: str) -> None:
    with contextlib.suppress(NotFound):  # none (a recipe without scripts), or already gone
        await kube.delete("v1", "ConfigMap", scripts.config_map_name(job), namespace=NAMESPACE)
