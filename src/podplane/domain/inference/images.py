"""Which container images operators may run (issue 34, S12; ADR 0017): an operator who picks an
image runs code in the cluster, so an admin may list the registries (or repositories) allowed.

References are normalized as container runtimes do (distribution/reference,
`ParseNormalizedNamed`): a first component without `.` or `:` that is not `localhost` is a
Docker Hub repository, and a single name is under `library/`. An entry allows that exact
repository or anything under it.
"""

from __future__ import annotations

from podplane.domain.errors import InvalidInput

DOCKER_HUB = "docker.io"


def repository(image: str) -> str:
    """`host/path` of an image reference, without its tag or digest."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name[: len(name) - len(last[-1])] + last[-1].split(":", 1)[0]
    first, _, rest = name.partition("/")
    if not rest:
        return f"{DOCKER_HUB}/library/{first}"
    if "." in first or ":" in first or first == "localhost":
        return name
    return f"{DOCKER_HUB}/{name}"


def check_registry(image: str | None, allowed: list[str], field: str = "image") -> None:
    """Refuse an image outside `allowed` (empty: any image). None: the engine's pinned one."""
    if image is None or not allowed:
        return
    repo = repository(image)
    if any(repo == a.rstrip("/") or repo.startswith(a.rstrip("/") + "/") for a in allowed):
        return
    raise InvalidInput(f"{field} must come from an allowed registry.", field=field,
                       hint="Allowed: " + ", ".join(allowed) + " (PODPLANE_ALLOWED_IMAGE_"
                       "REGISTRIES, set by the admin); or leave image out for the pinned "
                       "engine image.")
