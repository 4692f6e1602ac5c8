"""What a job runs: a recipe's entrypoint with its checked parameters, or a container the user
brought (image, argv, environment). Everything after this point (plan, render, view) is the
same for both: placement, mounts, restart budget, logs and diagnosis key on the job's pods,
not on where its command came from (ADR 0019)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from podplane.domain.errors import InvalidInput
from podplane.domain.jobs.kinds import HYPERPOD
from podplane.domain.jobs.recipes import JobKind, Recipe, Resources, recipe
from podplane.domain.jobs.requests import MAX_CONTAINER_BYTES, Container, JobRequest

BYO_RESOURCES = Resources()  # a recipe's defaults: 4 CPU, 16 GiB, EFA when the node has it


@dataclass(frozen=True)
class Workload:
    """Exactly one of `recipe` (with `params`, its resolved values) and `container`."""

    kind: JobKind
    recipe: Recipe | None = None
    params: dict[str, Any] = field(default_factory=dict)
    container: Container | None = None

    @property
    def recipe_name(self) -> str | None:
        return self.recipe.name if self.recipe else None

    @property
    def image(self) -> str:
        if self.container is not None:
            return self.container.image
        assert self.recipe is not None  # one of the two, by construction (workload_of)
        return str(self.params.get("image") or self.recipe.image)

    @property
    def resources(self) -> Resources:
        return self.recipe.resources if self.recipe else BYO_RESOURCES

    @property
    def default_replicas(self) -> int:
        return self.recipe.default_replicas if self.recipe else 1

    @property
    def elastic_capable(self) -> bool:
        """A recipe says; your own HyperPodPyTorchJob may scale if its launcher is
        `hyperpodrun` (the elastic agent follows the operator's scaling), other kinds not."""
        return self.recipe.elastic_capable if self.recipe else self.kind == HYPERPOD.kind

    @property
    def scripts(self) -> tuple[str, ...]:
        return self.recipe.scripts if self.recipe else ()

    def describe(self) -> str:
        return f"Recipe {self.recipe.name!r}" if self.recipe else f"Image {self.image!r}"


def workload_of(request: JobRequest) -> Workload:
    """The request's workload, checked: one of recipe and container, the recipe's parameters;
    InvalidInput (a 422 naming the field) otherwise."""
    if (request.recipe is None) == (request.container is None):
        raise InvalidInput("Give either a recipe or a container (your own image and "
                           "command), not both and not neither.",
                           field="container" if request.container else "recipe",
                           hint="Recipes: GET /api/v1/recipes; your own workload: "
                           "docs/training.md, \"Bring your own workload\".")
    if request.container is not None:
        if request.params:
            raise InvalidInput("params belong to recipes; pass your own values in "
                               "container.args or container.env.", field="params")
        _check_size(request.container)
        return Workload(request.container.kind, container=request.container)
    chosen = recipe(request.recipe or "")
    return Workload(chosen.kind, chosen, chosen.resolve(request.params))


def _check_size(container: Container) -> None:
    words = [*container.command, *container.args, *container.env, *container.env.values()]
    size = sum(len(word.encode()) for word in words)
    if size > MAX_CONTAINER_BYTES:
        raise InvalidInput(f"container's command, args and env are {size} bytes, over "
                           f"{MAX_CONTAINER_BYTES}.", field="container",
                           hint="Put long settings in a file under /data and pass its path.")
