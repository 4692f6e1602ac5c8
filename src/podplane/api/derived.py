"""Response models derived from the dataclass that declares a shape, so a field is declared once.

The service (or engine) dataclass names the fields, their order and their types; the API adds
only what it refines: a Literal for a free string, a nested response model for a nested
dataclass or dict, a description. `tests/api/test_shapes.py` checks each derived model has
exactly its source's fields.
"""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints, is_typeddict

from pydantic import BaseModel, Field, create_model


def fields_of(source: type, **refine: Any) -> type[BaseModel]:
    """A model with `source`'s fields (a dataclass, or a TypedDict whose keys are all
    required), in its order; `refine[name]` replaces a field's type (keeping the dataclass's
    default) or, as a (type, default-or-Field) pair, both."""
    hints = get_type_hints(source)
    fields: dict[str, Any] = {}
    for name, default in _declared(source):
        spec = refine.pop(name, hints[name])
        fields[name] = spec if isinstance(spec, tuple) else (spec, default)
    if refine:
        raise TypeError(f"{source.__name__} has no field(s) {sorted(refine)}")
    return create_model(f"_{source.__name__}Fields", **fields)


def _declared(source: type) -> list[tuple[str, Any]]:
    if is_typeddict(source):
        optional: frozenset[str] = getattr(source, "__optional_keys__", frozenset())
        if optional:
            raise TypeError(f"{source.__name__} has optional keys {sorted(optional)}")
        return [(name, ...) for name in get_type_hints(source)]
    return [(f.name, _default(f)) for f in dataclasses.fields(source)]


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return Field(default_factory=f.default_factory)
    return ...
