"""The form a reply reaches a client's model in: compact JSON with no null or empty optional fields.

``lean`` is the reply as a JSON-ready value: every optional field that says nothing (None, [],
{}, "", or what its ``exclude_if`` rules out) is left out; ``text`` is that value
as JSON without indentation. The MCP tools send both (structured content and its text), and
recall measures ``text`` to hold its whole reply to a token budget.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
from pydantic import BaseModel


def lean(value: Any) -> Any:
    """``value`` as JSON-ready data, optional fields with nothing in them left out."""
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        out: dict[str, Any] = {}
        for name, field in fields.items():
            raw = getattr(value, name)
            item = lean(raw)
            if not field.is_required() and (_empty(item) or (field.exclude_if and field.exclude_if(raw))):
                continue
            out[field.alias or name] = item
        return out
    if isinstance(value, dict):
        return {str(key): item for key, raw in value.items() if not _empty(item := lean(raw))}
    if isinstance(value, list | tuple):
        return [lean(item) for item in value]
    return pydantic_core.to_jsonable_python(value)


def text(value: Any) -> str:
    """The reply as the model reads it: ``lean(value)`` as JSON, no spaces, non-ASCII kept."""
    return json.dumps(lean(value), ensure_ascii=False, separators=(",", ":"))


def in_string(line: str) -> str:
    """``line`` as it appears inside a JSON string of a reply (quotes and newlines escaped)."""
    return json.dumps(line, ensure_ascii=False)[1:-1]


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)
