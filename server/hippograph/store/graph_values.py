"""Values of the graph's shape that cross the seam (edges as rows, claim and session keys), and
how the graph index encodes them in SQLite (times as exact microseconds, properties as JSON, any
number of ids as one JSON parameter)."""

from __future__ import annotations

import calendar
import functools
import json
import types
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

__all__ = [
    "ClaimKey",
    "EdgeRow",
    "SessionKey",
    "claim_key",
    "dump_props",
    "ids_param",
    "join_props",
    "load_props",
    "micros",
    "moment",
    "relates_props",
    "split_props",
]

_EPOCH = datetime(1970, 1, 1)


class EdgeRow(NamedTuple):
    """A typed edge as stored (fact-fact, ABOUT, RELATES, HAS_TAG): for explain, export, the walk."""

    type: str
    src: str
    dst: str
    props: Mapping[str, Any]


ClaimKey = tuple[str, str, str]  # (subject casefolded, predicate casefolded, scope)
SessionKey = tuple[str, str]  # (scope, session id)


def claim_key(subject: str | None, predicate: str | None, scope: str) -> ClaimKey | None:
    """The conflict rule's key for a fact, or None when it states no subject-predicate claim."""
    if not subject or not predicate:
        return None
    return subject.casefold(), predicate.casefold(), scope


def micros(moment: datetime) -> int:
    """``moment`` as exact microseconds since the epoch (a naive time is UTC, as Kùzu returns it)."""
    return calendar.timegm(moment.utctimetuple()) * 1_000_000 + moment.microsecond


# SQL that keeps the rows whose column is one of the ids ``ids_param`` passes as one parameter.
IN_IDS = "IN (SELECT value FROM json_each(?))"


def ids_param(ids: Iterable[str]) -> str:
    """Ids as one parameter: ``... IN (SELECT value FROM json_each(?))`` takes any number."""
    return json.dumps(list(ids))


def dump_props(props: Mapping[str, Any]) -> str:
    return json.dumps(
        {k: {"$t": v.isoformat()} if isinstance(v, datetime) else v for k, v in props.items()},
        sort_keys=True,
    )


@functools.lru_cache(maxsize=8192)
def load_props(text: str) -> Mapping[str, Any]:
    """Stored properties, read-only: an edge read again (the walk's hubs) is not decoded again."""
    return types.MappingProxyType(
        {
            k: datetime.fromisoformat(v["$t"]) if isinstance(v, dict) else v
            for k, v in json.loads(text).items()
        }
    )


def moment(at: int) -> datetime:
    """``micros`` back to a naive UTC time, as Kùzu returns them."""
    return _EPOCH + timedelta(microseconds=at)


def split_props(props: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """A fact-to-fact edge's properties as stored: its time (``micros``), and the rest as JSON
    (None when there is none: a NEXT edge has only its time)."""
    at = props.get("created_at")
    rest = {k: v for k, v in props.items() if k != "created_at"}
    return (micros(at) if isinstance(at, datetime) else None), (dump_props(rest) if rest else None)


def join_props(at: int | None, rest: str | None) -> Mapping[str, Any]:
    """``split_props`` undone, the time first (as the graph's reads list it)."""
    props: dict[str, Any] = {} if at is None else {"created_at": moment(at)}
    if rest is not None:
        props.update(load_props(rest))
    return props


def relates_props(
    predicate: str | None, weight: float | None, fact_id: str | None, at: int | None
) -> dict[str, Any]:
    """A RELATES edge's properties from its stored columns, in the graph's order, nulls left out."""
    values = (("predicate", predicate), ("weight", weight), ("fact_id", fact_id))
    props: dict[str, Any] = {k: v for k, v in values if v is not None}
    if at is not None:
        props["created_at"] = moment(at)
    return props


def offset_slices(last: int | None, rows: int) -> Iterator[tuple[int, str]]:
    """A table's rows in slices of at most ``rows`` by offset: each slice's first offset and a
    WHERE condition on ``x`` that keeps it; ``last`` is the highest offset (None: no rows)."""
    for start in range(0, -1 if last is None else int(last) + 1, rows):
        yield start, f"offset(id(x)) >= {start} AND offset(id(x)) < {start + rows}"
