"""Response models derived from the dataclass that declares a shape, so a field is declared once.

The service (or engine) dataclass names the fields, their order and their types; the API adds
only what it refines: a Literal for a free string, a nested response model for a nested
dataclass or dict, a description. `tests/api/test_shapes.py` checks each derived model has
exactly its source's fields.
"""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints

from pydantic import BaseModel, Field, create_model


def fields_of(source: type, **refine: Any) -> type[BaseModel]:
    """A model with `source`'s fields, in its order; `refine[name]` replaces a field's type
    (keeping the dataclass's default) or, as a (type, default-or-Field) pair, both."""
    hints = get_type_hints(source)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(source):
        spec = refine.pop(f.name, hints[f.name])
        fields[f.name] = spec if isinstance(spec, tuple) else (spec, _default(f))
    if refine:
        raise TypeError(f"{source.__name__} has no field(s) {sorted(refine)}")
    return create_model(f"_{source.__name__}Fields", **fields)


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return Field(default_factory=f.default_factory)
    return ...
