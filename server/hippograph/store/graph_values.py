"""Values of the graph's shape that cross the seam (edges as rows, claim and session keys), and
how the graph index encodes them in SQLite (times as exact microseconds, properties as JSON, any
number of ids as one JSON parameter)."""

from __future__ import annotations

import calendar
import functools
import json
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

__all__ = [
    "ClaimKey",
    "EdgeRow",
    "SessionKey",
    "centred_on",
    "claim_key",
    "distinct_scopes",
    "dump_props",
    "edges_in_fact_order",
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


def distinct_scopes(*tables: str) -> str:
    """SQL (SQLite's and PostgreSQL's) of the scopes the rows of ``tables`` are in: each table's
    index on ``scope`` walked from one scope to the next (a few lookups a scope), where SELECT
    DISTINCT reads every row (8.5 ms at 100k facts embedded, 20 ms on PostgreSQL, on every call
    in a project scope: the empty-scope note asks)."""
    walks = [
        f"w{i}(s) AS (SELECT min(scope) FROM {table} UNION ALL "
        f"SELECT (SELECT min(scope) FROM {table} WHERE scope > w{i}.s) FROM w{i} WHERE w{i}.s IS NOT NULL)"
        for i, table in enumerate(tables)
    ]
    found = " UNION ".join(f"SELECT s FROM w{i} WHERE s IS NOT NULL" for i in range(len(tables)))
    return f"WITH RECURSIVE {', '.join(walks)} {found}"


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


def edges_in_fact_order(fact_ids: Sequence[str], ends: Iterable[tuple[int, str, str]]) -> list[int]:
    """The order a graph read lists fact-to-fact edges in: each of ``fact_ids``' edges out, then
    in, each set in the order made. ``ends``: each edge's (sequence number, source, target),
    in the order made; returns their sequence numbers."""
    out: dict[str, list[int]] = {}
    into: dict[str, list[int]] = {}
    for seq, src, dst in ends:
        out.setdefault(src, []).append(seq)
        into.setdefault(dst, []).append(seq)
    return list(dict.fromkeys(seq for fid in fact_ids for seq in (*out.get(fid, ()), *into.get(fid, ()))))


def centred_on(about: Iterable[tuple[str, str, str]], entity_ids: Iterable[str]) -> set[str]:
    """The facts whose topic is one of ``entity_ids``, from their ABOUT rows (fact, entity,
    role): a fact's subject or object when it has one (a chat turn's speaker is its subject),
    else any entity it mentions. "Joanna: Congrats on the win, Nate!" is Joanna's, not Nate's."""
    wanted = set(entity_ids)
    links: dict[str, list[tuple[str, str]]] = {}
    for fid, eid, role in about:
        links.setdefault(fid, []).append((eid, role))
    centred = set()
    for fid, found in links.items():
        topics = [eid for eid, role in found if role != "mention"] or [eid for eid, _ in found]
        if any(eid in wanted for eid in topics):
            centred.add(fid)
    return centred
