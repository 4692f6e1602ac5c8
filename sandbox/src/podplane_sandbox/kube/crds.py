"""CustomResourceDefinitions: registering their kinds, CRD status, and checking custom
objects against the version's openAPIV3Schema."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube import errors, schema
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.resources import Registry, ResourceType, resource_type_from_crd
from podplane_sandbox.kube.store import Event, Store
from podplane_sandbox.kube.util import clone, iso

CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"


class CrdManager:
    def __init__(self, registry: Registry, store: Store) -> None:
        self.registry = registry
        self.store = store
        store.admit.setdefault(CRD_KEY, []).append(self._admit)
        store.listeners.append(self._on_event)

    def register(self, crd: dict[str, Any]) -> None:
        self.registry.add(resource_type_from_crd(crd))

    def _admit(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        causes = []
        for field in ("group", "names", "scope"):
            if not spec.get(field):
                causes.append(
                    {
                        "reason": "FieldValueRequired",
                        "field": f"spec.{field}",
                        "message": "Required value",
                    }
                )
        if names and not names.get("plural"):
            causes.append(
                {
                    "reason": "FieldValueRequired",
                    "field": "spec.names.plural",
                    "message": "Required value",
                }
            )
        if not causes and obj["metadata"]["name"] != f"{names['plural']}.{spec['group']}":
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "field": "metadata.name",
                    "message": f'Invalid value: "{obj["metadata"]["name"]}": must be '
                    'spec.names.plural+"."+spec.group',
                }
            )
        if causes:
            raise errors.invalid(rt.kind, rt.group, obj["metadata"]["name"], causes)
        now = iso(self.store.clock.now())
        names_status = {k: v for k, v in names.items()}
        names_status.setdefault("singular", names.get("kind", "").lower())
        names_status.setdefault("listKind", names.get("kind", "") + "List")
        obj["status"] = {
            "acceptedNames": names_status,
            "conditions": [
                {
                    "type": "NamesAccepted",
                    "status": "True",
                    "reason": "NoConflicts",
                    "message": "no conflicts found",
                    "lastTransitionTime": now,
                },
                {
                    "type": "Established",
                    "status": "True",
                    "reason": "InitialNamesAccepted",
                    "message": "the initial names have been accepted",
                    "lastTransitionTime": now,
                },
            ],
            "storedVersions": [v["name"] for v in spec.get("versions", []) if v.get("storage")],
        }

    def _on_event(self, event: Event) -> None:
        if event.rt_key != CRD_KEY:
            return
        if event.type == "DELETED":
            rt = resource_type_from_crd(event.obj)
            for obj in self.store.items(rt.key):
                self.store.remove_now(rt, obj)
            self.registry.remove(rt.key)
        else:
            self.register(event.obj)


def check_custom_object(
    rt: ResourceType, version: str, obj: dict[str, Any], field_validation: str
) -> tuple[dict[str, Any], list[str]]:
    """Defaults, prunes and validates; returns the object to store and warnings."""
    sch = rt.schema_for(version)
    if sch is None:
        return obj, []
    outcome = schema.check(sch, clone(obj))
    name = obj.get("metadata", {}).get("name") or obj.get("metadata", {}).get("generateName", "")
    if outcome.causes:
        raise errors.invalid(rt.kind, rt.group, name, outcome.causes)
    warnings = [f'unknown field "{path}"' for path in outcome.unknown]
    if warnings and field_validation == "Strict":
        raise KubeError(
            400,
            f'{rt.kind} in version "{version}" cannot be handled as a '
            f"{rt.kind}: strict decoding error: " + ", ".join(warnings),
            "BadRequest",
        )
    if field_validation == "Ignore":
        warnings = []
    return outcome.value, warnings
