"""Reading imported JSON Lines: line parsing, field checks, record decoders; each problem keeps its line.

Nothing here writes: a whole input is read and checked before an import stores anything.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import (
    EDGE_PROPS,
    FACT_EDGES,
    EdgeType,
    Entity,
    Fact,
    FactKind,
    FactStatus,
    Provenance,
    Source,
    TtlPolicy,
    name_key,
)

FORMAT, FORMAT_VERSION = "hippograph", 1
SHOWN_ERRORS = 5  # problems listed in an error, of however many were found
TIMED_EDGES = {*FACT_EDGES, EdgeType.RELATES}
ROLES = ("subject", "object", "mention")


class Bad(ValueError):
    """One thing wrong with one record: collected with its line, reported all together."""


class Problems:
    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def add(self, where: str, message: str) -> None:
        self.found.append((where, message))

    def raise_if_any(self, what: str) -> None:
        if not self.found:
            return
        shown = "; ".join(f"{where}: {message}" for where, message in self.found[:SHOWN_ERRORS])
        more = f"; and {len(self.found) - SHOWN_ERRORS} more" if len(self.found) > SHOWN_ERRORS else ""
        raise InvalidInput(
            f"cannot import this {what}: {len(self.found)} bad record(s), nothing was written. "
            f"{shown}{more}. Fix or remove those lines and import again."
        )


def json_lines(lines: Iterable[str], problems: Problems) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue  # blank lines (a trailing newline, hand edits) carry nothing
        try:
            yield f"line {number}", json.loads(line)
        except json.JSONDecodeError as err:
            problems.add(f"line {number}", f"not valid JSON ({err.msg} at column {err.colno})")


def read_text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Bad(f"{field} must be a non-empty string, got {value!r:.60}")
    return value


def _optional_text(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise Bad(f"{field} must be a string or null, got {value!r:.60}")
    return value


def read_name(value: Any, field: str) -> str:
    if not name_key(read_text(value, field)):
        raise Bad(f"{field} {value!r:.60} needs at least one letter or digit")
    return str(value).strip()


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise Bad(f"{field} must be a number, got {value!r:.60}")
    return float(value)


def _unit(value: Any, field: str) -> float:
    if not 0.0 <= _number(value, field) <= 1.0:
        raise Bad(f"{field} {value} is outside 0..1")
    return float(value)


def _count(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Bad(f"{field} must be a whole number >= 0, got {value!r:.60}")
    return value


def _flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise Bad(f"{field} must be true or false, got {value!r:.60}")
    return value


def _strings(value: Any, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Bad(f"{field} must be a list of strings")
    return tuple(value)


def _time(value: Any, field: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise Bad(f"{field} {value!r:.60} is not an ISO 8601 time like 2024-05-08T09:30:00Z")
    if parsed.tzinfo is None:
        raise Bad(f"{field} {value!r:.60} has no time zone: add Z for UTC")
    return parsed.astimezone(UTC)


def _required_time(value: Any, field: str) -> datetime:
    parsed = _time(value, field)
    if parsed is None:
        raise Bad(f"{field} must be a time, not null")
    return parsed


def _scope(value: Any, field: str) -> str:
    try:
        return check.scope(read_text(value, field))
    except InvalidInput as err:
        raise Bad(str(err)) from None


def _enum(enum: type[StrEnum], *, optional: bool = False) -> Callable[[Any, str], StrEnum | None]:
    def convert(value: Any, field: str) -> StrEnum | None:
        if optional and value is None:
            return None
        try:
            return enum(value)
        except ValueError:
            allowed = ", ".join(m.value for m in enum)
            raise Bad(f"{field} {value!r:.60} is not known: use one of {allowed}") from None

    return convert


def _id(prefix: str) -> Callable[[Any, str], str]:
    def convert(value: Any, field: str) -> str:
        try:
            if isinstance(value, str) and value.startswith(prefix + "_"):
                return check.node_id(value, field)
        except InvalidInput:
            pass
        raise Bad(f"{field} {value!r:.60} is not {'a fact' if prefix == 'f' else 'an entity'} id")

    return convert


Convert = Callable[[Any, str], Any]
_FACT_SPEC: dict[str, Convert] = {
    "id": _id("f"),
    "content": read_text,
    "kind": _enum(FactKind),
    "status": _enum(FactStatus),
    "confidence": _unit,
    "source": _enum(Source),
    "provenance": _enum(Provenance),
    "scope": _scope,
    "created_at": _required_time,
    "valid_from": _required_time,
    "valid_until": _time,
    "event_time": _time,
    "last_accessed": _time,
    "access_count": _count,
    "pinned": _flag,
    "ttl_policy": _enum(TtlPolicy),
    "expires_at": _time,
    **dict.fromkeys(
        ("subject", "predicate", "object", "session_id", "evidence", "status_reason"), _optional_text
    ),
    "tags": _strings,
    # Since schema v2; an older export's history falls back to valid_until (lifecycle.believed_until).
    "believed_until": _time,
    "prior_status": _enum(FactStatus, optional=True),
    "corroborations": lambda value, field: max(1, _count(value, field)),
    "sources": lambda value, field: tuple(_enum(Source)(v, field) for v in _strings(value, field)),
    "last_stated": _time,
}
_ENTITY_SPEC: dict[str, Convert] = {
    "id": _id("e"),
    "name": read_name,
    "entity_type": read_text,
    "scope": _scope,
    "aliases": _strings,
    "summary": lambda value, field: _optional_text(value, field) or "",
    "mention_count": _count,
    "first_seen": _time,
    "last_mentioned": _time,
}


def _decode(record: dict[str, Any], spec: dict[str, Convert], required: Iterable[str]) -> dict[str, Any]:
    unknown = sorted(set(record) - set(spec) - {"type"})
    if unknown:
        raise Bad(f"unknown field(s) {', '.join(unknown)}")
    missing = [name for name in required if name not in record]
    if missing:
        raise Bad(f"missing field(s) {', '.join(missing)}")
    return {name: spec[name](value, name) for name, value in record.items() if name != "type"}


_FACT_REQUIRED = [f.name for f in dataclasses.fields(Fact) if f.default is dataclasses.MISSING]


def decode_fact(record: dict[str, Any]) -> Fact:
    return Fact(**_decode(record, _FACT_SPEC, _FACT_REQUIRED))


def decode_entity(record: dict[str, Any]) -> Entity:
    values = _decode(record, _ENTITY_SPEC, ("id", "name", "entity_type", "scope"))
    return Entity(type=values.pop("entity_type"), **values)


@dataclass(frozen=True)
class Edge:
    type: str
    src: str
    dst: str
    props: dict[str, Any]
    created_at: datetime | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two edges the same edge: ABOUT and RELATES also differ by role / predicate."""
        if self.type == EdgeType.ABOUT:
            return (self.type, self.src, self.dst, self.props.get("role"))
        if self.type == EdgeType.RELATES:
            return (self.type, self.src, self.dst, self.props.get("predicate"), self.props.get("fact_id"))
        return (self.type, self.src, self.dst)


def decode_edge(record: dict[str, Any]) -> Edge:
    spec: dict[str, Convert] = {
        "edge": read_text,
        "from": read_text,
        "to": read_text,
        "props": lambda v, f: v,
    }
    fields = _decode(record, spec, ("edge", "from", "to"))
    edge = fields["edge"]
    allowed = EDGE_PROPS.get(edge)
    if allowed is None:
        raise Bad(f"edge {edge!r:.60} is not known: use one of {', '.join(EDGE_PROPS)}")
    src = _id("e" if edge == EdgeType.RELATES else "f")(fields["from"], "from")
    dst = (
        fields["to"]
        if edge == EdgeType.HAS_TAG
        else _id("f" if edge in FACT_EDGES else "e")(fields["to"], "to")
    )
    raw = fields.get("props", {})
    if not isinstance(raw, dict):
        raise Bad("props must be an object")
    props: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "created_at" and edge in TIMED_EDGES:
            continue
        if name not in allowed:
            raise Bad(f"{edge} edges carry no property {name!r:.60}")
        if value is not None:
            props[name] = (_number if allowed[name] is float else read_text)(value, f"props.{name}")
    if edge == EdgeType.ABOUT and props.get("role") not in ROLES:
        raise Bad(f"ABOUT edges need props.role, one of {', '.join(ROLES)}")
    if edge == EdgeType.RELATES and "predicate" not in props:
        raise Bad("RELATES edges need props.predicate")
    return Edge(edge, src, dst, props, _time(raw.get("created_at"), "props.created_at"))


def check_header(record: Any, our_schema: int) -> None:
    if not isinstance(record, dict) or record.get("type") != FORMAT:
        mcp_like = isinstance(record, dict) and bool({"entityType", "relationType", "entities"} & set(record))
        hint = (
            " (it looks like an MCP memory server file: import it with --format mcp-memory)"
            if mcp_like
            else ""
        )
        raise Bad(f'not a hippograph export: the first line must be {{"type": "hippograph", ...}}{hint}')
    if record.get("version") != FORMAT_VERSION:
        raise Bad(f"format version {record.get('version')!r:.20} is not {FORMAT_VERSION}")
    schema = record.get("schema_version")
    if isinstance(schema, int) and schema > our_schema:
        raise Bad(f"written by a newer hippograph (schema {schema} > {our_schema}): upgrade hippograph first")
