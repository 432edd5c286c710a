"""The form a reply reaches a client's model in: compact JSON with no null or empty optional fields.

``lean`` is the reply as a JSON-ready value: every optional field that says nothing (None, [],
{}, "", or what its ``exclude_if`` rules out) is left out; ``text`` is that value
as JSON without indentation. The MCP tools send both (structured content and its text), and
recall measures ``text`` to hold its whole reply to a token budget.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pydantic_core
from pydantic import BaseModel

_JSON_SCALARS = frozenset({str, int, float, bool})


def lean(value: Any) -> Any:
    """``value`` as JSON-ready data, optional fields with nothing in them left out."""
    if value is None or type(value) in _JSON_SCALARS:
        return value  # as JSON has them (not their subclasses: an enum member becomes its value)
    if isinstance(value, BaseModel):
        out: dict[str, Any] = {}
        for name, key, required, exclude_if in _fields(type(value)):
            raw = getattr(value, name)
            item = lean(raw)
            if not required and (_empty(item) or (exclude_if is not None and exclude_if(raw))):
                continue
            out[key] = item
        return out
    if isinstance(value, dict):
        return {str(key): item for key, raw in value.items() if not _empty(item := lean(raw))}
    if isinstance(value, list | tuple):
        return [lean(item) for item in value]
    return pydantic_core.to_jsonable_python(value)


@functools.cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, str, bool, Callable[[Any], bool] | None], ...]:
    """Each field of ``model``: its name, its key in JSON, whether it is required, its exclude_if."""
    return tuple(
        (name, field.alias or name, field.is_required(), field.exclude_if)
        for name, field in model.model_fields.items()
    )


def text(value: Any) -> str:
    """The reply as the model reads it: ``lean(value)`` as JSON, no spaces, non-ASCII kept."""
    return as_text(lean(value))


def as_text(leaned: Any) -> str:
    """``text`` of a value ``lean`` made already."""
    return json.dumps(leaned, ensure_ascii=False, separators=(",", ":"))


def in_string(line: str) -> str:
    """``line`` as it appears inside a JSON string of a reply (quotes and newlines escaped)."""
    return json.dumps(line, ensure_ascii=False)[1:-1]


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)
