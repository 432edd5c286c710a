"""Kùzu adapter: the only module that speaks Cypher.

Kùzu is hippograph's source of truth (facts, entities, typed edges, lifecycle state).
Every query is parameterised, and every ``$param`` must be bound: kuzu 0.11.3 treats an
unbound parameter in a WHERE as matching every row, which would turn an update or delete
of one fact into one of all of them. Rows become ``Fact``/``Entity`` values only here.
Kùzu's upstream is archived; keeping all Cypher in this file lets a fork replace it.
"""

from __future__ import annotations

import gc
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import kuzu

from hippograph.domain.errors import SchemaTooNew, StoreError
from hippograph.domain.models import (
    ACTIVE_STATUSES,
    EDGE_PROPS,
    FACT_EDGES,
    Entity,
    Fact,
    FactKind,
    FactStatus,
    Provenance,
    Source,
    TtlPolicy,
    name_key,
)
from hippograph.store.graph_mirror import ClaimKey, EdgeRow, GraphMirror, claim_key
from hippograph.store.schema import graph_schema_version, kuzu_migrations

log = logging.getLogger(__name__)

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")

# Fact-to-fact edge tables and the properties each carries besides created_at.
_FACT_EDGE_PROPS: Mapping[str, tuple[str, ...]] = {edge: tuple(EDGE_PROPS[edge]) for edge in FACT_EDGES}

_FACT_COLUMNS = (
    "id content kind status confidence source provenance scope created_at valid_from valid_until "
    "event_time last_accessed access_count pinned ttl_policy expires_at subject predicate object tags "
    "session_id evidence status_reason"
).split()
_FACT_STATE_COLUMNS = (
    "status",
    "confidence",
    "valid_until",
    "last_accessed",
    "access_count",
    "pinned",
    "expires_at",
    "status_reason",
)
_ENTITY_COLUMNS = (
    "id name name_key type aliases summary mention_count first_seen last_mentioned scope".split()
)


def _to_db_time(value: datetime | None) -> datetime | None:
    # Kùzu TIMESTAMP is naive; we store UTC and re-attach the zone on the way out.
    if value is None:
        return None
    return value.astimezone(UTC).replace(tzinfo=None)


def _from_db_time(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None else None


def _fact_params(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id,
        "content": fact.content,
        "kind": fact.kind.value,
        "status": fact.status.value,
        "confidence": float(fact.confidence),
        "source": fact.source.value,
        "provenance": fact.provenance.value,
        "scope": fact.scope,
        "created_at": _to_db_time(fact.created_at),
        "valid_from": _to_db_time(fact.valid_from),
        "valid_until": _to_db_time(fact.valid_until),
        "event_time": _to_db_time(fact.event_time),
        "last_accessed": _to_db_time(fact.last_accessed),
        "access_count": int(fact.access_count),
        "pinned": bool(fact.pinned),
        "ttl_policy": fact.ttl_policy.value,
        "expires_at": _to_db_time(fact.expires_at),
        "subject": fact.subject,
        "predicate": fact.predicate,
        "object": fact.object,
        "tags": list(fact.tags),
        "session_id": fact.session_id,
        "evidence": fact.evidence,
        "status_reason": fact.status_reason,
    }


def _fact_from_row(row: Mapping[str, Any]) -> Fact:
    return Fact(
        id=row["id"],
        content=row["content"],
        kind=FactKind(row["kind"]),
        status=FactStatus(row["status"]),
        confidence=float(row["confidence"]),
        source=Source(row["source"]),
        provenance=Provenance(row["provenance"]),
        scope=row["scope"],
        created_at=_from_db_time(row["created_at"]),  # type: ignore[arg-type]
        valid_from=_from_db_time(row["valid_from"]),  # type: ignore[arg-type]
        valid_until=_from_db_time(row["valid_until"]),
        event_time=_from_db_time(row["event_time"]),
        last_accessed=_from_db_time(row["last_accessed"]),
        access_count=int(row["access_count"] or 0),
        pinned=bool(row["pinned"]),
        ttl_policy=TtlPolicy(row["ttl_policy"]),
        expires_at=_from_db_time(row["expires_at"]),
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        tags=tuple(row["tags"] or ()),
        session_id=row["session_id"],
        evidence=row["evidence"],
        status_reason=row["status_reason"],
    )


def _entity_from_row(row: Mapping[str, Any]) -> Entity:
    return Entity(
        id=row["id"],
        name=row["name"],
        type=row["type"],
        scope=row["scope"],
        aliases=tuple(row["aliases"] or ()),
        summary=row["summary"] or "",
        mention_count=int(row["mention_count"] or 0),
        first_seen=_from_db_time(row["first_seen"]),
        last_mentioned=_from_db_time(row["last_mentioned"]),
    )


# Up to this many rows, _for_each runs a keyed statement per row instead of one UNWIND.
_KEYED_ROWS = 16
# A fact-to-fact edge to write: (source id, target id, time, properties).
FactLink = tuple[str, str, datetime, Mapping[str, Any]]


class Relation(NamedTuple):
    """A RELATES edge to write: ``src -[predicate]-> dst``, stated by ``fact_id`` (if any) at ``at``."""

    src: str
    dst: str
    predicate: str
    weight: float
    fact_id: str | None
    at: datetime


def _props_by_row(columns: Mapping[str, list[Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """Per row of a whole-table read, its ``names`` columns that are not null."""
    return [
        {n: v for n, v in zip(names, row, strict=True) if v is not None}
        for row in zip(*(columns[n] for n in names), strict=True)
    ]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a whole-table load allocates millions of objects.

    Each allocation burst otherwise triggers collections that rescan everything loaded so far:
    loading the mirror of 100k facts took 2.9-4.0 s with collection on, 2.3-3.2 s off.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _edge_props(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if not k.startswith("_") and v is not None}


class GraphStore:
    """One Kùzu database (a single file) opened read-write by this process."""

    def __init__(self, path: Path, *, max_db_size: int, buffer_pool_bytes: int) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._check_version_read_only()
        try:
            self._db = kuzu.Database(str(path), max_db_size=max_db_size, buffer_pool_size=buffer_pool_bytes)
        except RuntimeError as err:
            raise StoreError(
                f"cannot open the graph store {path}: {err}. If another hippograph process is using "
                "this data dir, stop it or point this one at another --data-dir."
            ) from err
        self._conn = kuzu.Connection(self._db)
        # Each statement is prepared once: kuzu 0.11.3 keeps ~30-130 KB of native memory for
        # every statement it prepares (an UNWIND of a 25-field row: ~0.17 MB a call), so
        # preparing per call grew a server by ~0.5 MB per remember, without bound. Planning
        # once also saves the planner's time on every call after the first.
        self._prepared: dict[str, kuzu.PreparedStatement] = {}
        self._types: dict[str, dict[str, str]] = {}  # table -> column -> Kùzu type (see _cast)
        self._migrate()
        # Writes reach the mirror when they commit; inside a transaction they wait here.
        self._pending: list[Callable[[], None]] | None = None
        self._mirror = self._load_mirror()
        # Every fact row, read once in the background and kept current by the writes below:
        # Kùzu reads scattered wide rows slowly (~2 ms a fact at 100k), and search reads ~30.
        self._facts: dict[str, Fact] = {}
        self._closing = threading.Event()
        self._fact_loader = threading.Thread(target=self._load_facts, name="fact-cache", daemon=True)
        self._fact_loader.start()

    # ------------------------------------------------------------ plumbing

    def close(self) -> None:
        self._closing.set()
        self._fact_loader.join()
        with self._lock:
            self._conn.close()
            self._db.close()

    def _run(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        params = dict(params or {})
        wanted = set(_PARAM.findall(query))
        if wanted != set(params):
            # A bug, never user input: refusing here is what keeps a one-row delete one row.
            raise RuntimeError(
                f"Cypher parameters do not match: unbound {sorted(wanted - set(params))}, "
                f"unused {sorted(set(params) - wanted)}"
            )
        with self._lock:
            prepared = self._prepared.get(query)
            if prepared is None:
                prepared = self._prepared[query] = self._conn.prepare(query)
            result = self._conn.execute(prepared, params)
            assert isinstance(result, kuzu.QueryResult)
            columns = result.get_column_names()
            rows = [dict(zip(columns, row, strict=True)) for row in result.get_all()]
            result.close()
        return rows

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all (and reach the mirror only then)."""
        with self._lock:
            self._conn.execute("BEGIN TRANSACTION")
            self._pending = []
            try:
                yield
            except BaseException:
                self._pending = None
                # A statement that failed (e.g. a full buffer pool) has rolled it back already;
                # "no active transaction" must not hide that failure.
                with suppress(RuntimeError):
                    self._conn.execute("ROLLBACK")
                raise
            pending, self._pending = self._pending, None
            self._conn.execute("COMMIT")
            for apply in pending:
                apply()

    def check_mirror(self, *, repair: bool) -> list[str]:
        """Compare the mirror and the fact cache with the stored graph; ``repair`` reloads them."""
        with self._lock:
            stored = self._load_mirror()
            live, disk = self._mirror.snapshot(), stored.snapshot()
            problems = [
                f"graph mirror {part}: {len(live[part] - disk[part])} extra, "
                f"{len(disk[part] - live[part])} missing"
                for part in disk
                if live[part] != disk[part]
            ]
            if problems and repair:
                self._mirror = stored
            rows = {fact.id: fact for fact in self.all_facts()}
            stale = [fid for fid, fact in self._facts.items() if rows.get(fid) != fact]
            if stale:
                problems.append(f"fact cache: {len(stale)} stale")
                if repair:
                    for fid in stale:
                        self._facts.pop(fid)
        return problems

    def _mirrored(self, apply: Callable[[], None]) -> None:
        """Apply a write that just ran to the mirror: now, or when its transaction commits."""
        with self._lock:
            if self._pending is not None:
                self._pending.append(apply)
            else:
                apply()

    def _columns(self, query: str) -> dict[str, list[Any]]:
        """A whole-table read as Python lists per column (Arrow: ~5x faster than rows)."""
        with self._lock:
            result = self._conn.execute(query)
            assert isinstance(result, kuzu.QueryResult)
            table = result.get_as_arrow(chunk_size=1_000_000)
            result.close()
        return {name: table.column(name).to_pylist() for name in table.column_names}

    def _load_facts(self) -> None:
        try:
            if self._closing.is_set():
                return
            columns = self._columns(
                f"MATCH (f:Fact) RETURN {', '.join(f'f.{c} AS {c}' for c in _FACT_COLUMNS)}"
            )
            ids = columns["id"]
            for start in range(0, len(ids), 5_000):  # in slices, so a closing store stops soon
                if self._closing.is_set():
                    return
                rows = (
                    {c: columns[c][i] for c in _FACT_COLUMNS}
                    for i in range(start, min(start + 5_000, len(ids)))
                )
                facts = [_fact_from_row(row) for row in rows]
                with self._lock:
                    for fact in facts:
                        # A write since the read above put a newer version here: keep that one.
                        self._facts.setdefault(fact.id, fact)
        except Exception:  # the cache is an optimisation: reads fall back to Kùzu
            log.exception("could not preload facts; reading them from the graph as needed")

    def _remember_fact(self, fact: Fact) -> None:
        self._facts[fact.id] = fact

    def _load_mirror(self) -> GraphMirror:
        with _gc_paused():
            return self._read_mirror()

    def _read_mirror(self) -> GraphMirror:
        mirror = GraphMirror()
        facts = self._columns(
            "MATCH (f:Fact) RETURN f.id AS id, f.status AS status, f.created_at AS t, "
            "f.subject AS subject, f.predicate AS predicate, f.scope AS scope, f.session_id AS session"
        )
        claims = list(map(claim_key, facts["subject"], facts["predicate"], facts["scope"]))
        mirror.load_facts(facts["id"], facts["status"], facts["t"], claims, facts["session"])
        entities = self._columns("MATCH (e:Entity) RETURN e.id AS id, e.name AS name")
        mirror.load_entities(entities["id"], entities["name"])
        for edge_type, names in _FACT_EDGE_PROPS.items():
            fields = ("created_at", *names)
            props = "".join(f", r.{n} AS {n}" for n in fields)
            cols = self._columns(
                f"MATCH (a:Fact)-[r:{edge_type}]->(b:Fact) RETURN a.id AS src, b.id AS dst{props}"
            )
            mirror.load_fact_edges(edge_type, cols["src"], cols["dst"], _props_by_row(cols, fields))
        about = self._columns(
            "MATCH (f:Fact)-[r:ABOUT]->(e:Entity) RETURN e.id AS e, f.id AS f, r.role AS role "
            "ORDER BY e.id, f.created_at, f.id"
        )
        mirror.load_about(about["e"], about["f"], about["role"])
        rel = self._columns(
            "MATCH (a:Entity)-[r:RELATES]->(b:Entity) RETURN a.id AS src, b.id AS dst, "
            "r.predicate AS predicate, r.weight AS weight, r.fact_id AS fact_id, r.created_at AS created_at"
        )
        relates = _props_by_row(rel, ("predicate", "weight", "fact_id", "created_at"))
        for src, dst, values in zip(rel["src"], rel["dst"], relates, strict=True):
            mirror.link_entities(src, dst, values)
        tags = self._columns(
            "MATCH (f:Fact)-[:HAS_TAG]->(t:Tag) RETURN f.id AS f, t.name AS tag ORDER BY f.created_at, f.id"
        )
        mirror.load_tags(tags["f"], tags["tag"])
        return mirror

    def _table_names(self, conn: kuzu.Connection) -> set[str]:
        result = conn.execute("CALL show_tables() RETURN name")
        assert isinstance(result, kuzu.QueryResult)
        return {str(row[0]) for row in result.get_all()}  # type: ignore[index]

    def _check_version_read_only(self) -> None:
        # Refuse a newer schema before opening read-write, so such a data dir is never touched.
        if not self.path.exists():
            return
        try:
            db = kuzu.Database(str(self.path), read_only=True)
        except RuntimeError:
            return  # locked by a writer, or unreadable: the read-write open reports it
        try:
            conn = kuzu.Connection(db)
            if "Meta" in self._table_names(conn):
                result = conn.execute("MATCH (m:Meta {key: 'schema_version'}) RETURN m.value")
                assert isinstance(result, kuzu.QueryResult)
                rows: list[Any] = result.get_all()
                if rows and int(rows[0][0]) > graph_schema_version():
                    raise SchemaTooNew(
                        f"{self.path} holds graph schema version {rows[0][0]}, newer than this hippograph "
                        f"understands ({graph_schema_version()}). Upgrade hippograph; nothing was touched."
                    )
            conn.close()
        finally:
            db.close()

    def schema_version(self) -> int:
        if "Meta" not in self._table_names(self._conn):
            return 0
        rows = self._run("MATCH (m:Meta {key: $key}) RETURN m.value AS v", {"key": "schema_version"})
        return int(rows[0]["v"]) if rows else 0

    def _migrate(self) -> None:
        current = self.schema_version()
        for migration in kuzu_migrations():
            if migration.version <= current:
                continue
            log.info("applying graph schema migration %03d_%s", migration.version, migration.name)
            with self.transaction():
                for statement in migration.statements:
                    self._conn.execute(statement)
                self._run(
                    "MERGE (m:Meta {key: $key}) SET m.value = $value",
                    {"key": "schema_version", "value": str(migration.version)},
                )

    def get_meta(self, key: str) -> str | None:
        rows = self._run("MATCH (m:Meta {key: $key}) RETURN m.value AS v", {"key": key})
        return rows[0]["v"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._run("MERGE (m:Meta {key: $key}) SET m.value = $value", {"key": key, "value": value})

    # ------------------------------------------------------------ facts

    def _cast(self, table: str, column: str) -> str:
        """``CAST(r.column AS type)`` for a row of an UNWIND: Kùzu types a field that is null in
        every row of a batch as STRING, which it will not store in a TIMESTAMP or a list column."""
        types = self._types.get(table)
        if types is None:
            # table_info takes no parameters; ``table`` is always one of this module's names.
            rows = self._run(f"CALL table_info('{table}') RETURN *")
            types = self._types[table] = {row["name"]: row["type"] for row in rows}
        return f"CAST(r.{column} AS {types[column]})"

    def _for_each(
        self,
        rows: list[dict[str, Any]],
        ends: Sequence[tuple[str, str, str]],
        table: str,
        columns: Sequence[str],
        clause: str,
    ) -> None:
        """Run ``clause`` once per row, with each row's ``columns`` of ``table`` bound as ``v_<column>``.

        ``ends`` are the nodes to find first, as (pattern, key property, row field): ``("a:Fact",
        "id", "src")`` matches ``(a:Fact {id: <row's src>})``. Each is matched in a MATCH of its
        own, by a plain variable: kuzu 0.11.3 plans a node keyed by a field of the UNWIND row, or
        two nodes in one MATCH, as a cross product with every node of the table (256 edges took
        10 s at 100k facts, or exhausted the buffer pool).
        """
        with self._lock:
            if len(rows) == 1 or (self._pending is not None and len(rows) <= _KEYED_ROWS):
                # A few rows (the single-fact path): ends keyed by parameters are primary-key
                # lookups (~0.3 ms); found through the UNWIND row, each end costs a scan of its
                # table (~10 ms at 100k facts). One statement per row, so only inside a
                # transaction (or for one row), which keeps the rows all-or-nothing.
                matches = " ".join(
                    f"MATCH ({pattern} {{{key}: $end{i}}})" for i, (pattern, key, _) in enumerate(ends)
                )
                found = [pattern.split(":")[0] for pattern, _, _ in ends]
                values = [*found, *(f"{self._cast(table, column)} AS v_{column}" for column in columns)]
                if columns:
                    query = f"{matches} UNWIND $rows AS r WITH {', '.join(values)} {clause}"
                else:
                    query = f"{matches} {clause}"
                for row in rows:
                    params: dict[str, Any] = {f"end{i}": row[field] for i, (_, _, field) in enumerate(ends)}
                    if columns:
                        params["rows"] = [{c: row[c] for c in columns}]
                    self._run(query, params)
                return
        fields = [*(field for _, _, field in ends), *columns]
        values = [f"r.{field} AS v_{field}" for _, _, field in ends]
        values += [f"{self._cast(table, column)} AS v_{column}" for column in columns]
        query = f"UNWIND $rows AS r WITH {', '.join(values)}"
        for i, (pattern, key, field) in enumerate(ends):
            if i:
                found = [end.split(":")[0] for end, _, _ in ends[:i]]
                query += f" WITH {', '.join([*found, *(f'v_{f}' for f in fields[i:])])}"
            query += f" MATCH ({pattern} {{{key}: v_{field}}})"
        self._run(f"{query} {clause}", {"rows": rows})

    def insert_facts(self, facts: Sequence[Fact]) -> None:
        """Create new facts, all in one statement."""
        if not facts:
            return
        facts = list(facts)
        rows = [_fact_params(fact) for fact in facts]
        fields = ", ".join(f"{c}: {self._cast('Fact', c)}" for c in _FACT_COLUMNS)
        self._run(f"UNWIND $rows AS r CREATE (:Fact {{{fields}}})", {"rows": rows})

        def apply() -> None:
            for fact, row in zip(facts, rows, strict=True):
                claim = claim_key(fact.subject, fact.predicate, fact.scope)
                self._mirror.add_fact(fact.id, fact.status.value, row["created_at"], claim, fact.session_id)
                self._remember_fact(fact)

        self._mirrored(apply)

    def update_fact_state(self, fact: Fact) -> None:
        self.update_fact_states([fact])

    def update_fact_states(self, facts: Sequence[Fact]) -> None:
        """Write back the lifecycle fields; content and identity never change in place."""
        if not facts:
            return
        facts = list(facts)
        rows = [
            {k: v for k, v in _fact_params(f).items() if k in (*_FACT_STATE_COLUMNS, "id")} for f in facts
        ]
        sets = ", ".join(f"f.{c} = v_{c}" for c in _FACT_STATE_COLUMNS)
        self._for_each(rows, [("f:Fact", "id", "id")], "Fact", _FACT_STATE_COLUMNS, f"SET {sets}")

        def apply() -> None:
            for fact in facts:
                self._mirror.set_status(fact.id, fact.status.value)
                self._remember_fact(fact)

        self._mirrored(apply)

    def get_facts(self, ids: Sequence[str]) -> dict[str, Fact]:
        if not ids:
            return {}
        with self._lock:
            # Inside a transaction (this thread's), its uncommitted writes are only in Kùzu.
            cached = {} if self._pending is not None else self._facts
            found = {fid: cached[fid] for fid in ids if fid in cached}
            misses = [fid for fid in dict.fromkeys(ids) if fid not in found]
            if misses:
                # One primary-key lookup per id (UNWIND) beats a filtered scan (IN).
                rows = self._run("UNWIND $ids AS x MATCH (f:Fact {id: x}) RETURN f", {"ids": misses})
                for row in rows:
                    fact = _fact_from_row(row["f"])
                    found[fact.id] = fact
                    if self._pending is None:
                        self._facts[fact.id] = fact
        return found

    def get_fact(self, fact_id: str) -> Fact | None:
        return self.get_facts([fact_id]).get(fact_id)

    def all_facts(self) -> Iterator[Fact]:
        for row in self._run("MATCH (f:Fact) RETURN f ORDER BY f.created_at"):
            yield _fact_from_row(row["f"])

    def fact_statuses(self) -> dict[str, str]:
        """Every fact id and its status (from the mirror: no table scan)."""
        with self._lock:
            return self._mirror.statuses()

    def fact_ids(self) -> set[str]:
        return {row["id"] for row in self._run("MATCH (f:Fact) RETURN f.id AS id")}

    def active_facts_with(self, keys: Iterable[ClaimKey]) -> dict[ClaimKey, list[Fact]]:
        """The active facts of each key (a ``claim_key``), from the mirror and the fact cache."""
        with self._lock:
            ids = {key: self._mirror.active_claims(key) for key in keys}
        facts = self.get_facts([fid for found in ids.values() for fid in found])
        return {key: [facts[fid] for fid in found if fid in facts] for key, found in ids.items()}

    def last_facts_in_sessions(self, session_ids: Iterable[str]) -> dict[str, str]:
        """The id of the latest fact of each session that has one (from the mirror: no query)."""
        with self._lock:
            return self._mirror.last_facts_in_sessions(set(session_ids))

    def tag_fact(self, fact_id: str, tags: Iterable[str]) -> None:
        self.tag_facts([(fact_id, tag) for tag in tags])

    def tag_facts(self, tags: Sequence[tuple[str, str]]) -> None:
        """HAS_TAG edges from (fact id, tag) pairs the store does not hold yet; tags are created as needed."""
        if not tags:
            return
        pairs = list(dict.fromkeys(tags))  # one edge per pair, however often it is asked for
        self._run("UNWIND $names AS name MERGE (:Tag {name: name})", {"names": sorted({t for _, t in pairs})})
        self._for_each(
            [{"fact": fid, "tag": tag} for fid, tag in pairs],
            [("f:Fact", "id", "fact"), ("t:Tag", "name", "tag")],
            "HAS_TAG",
            (),
            "CREATE (f)-[:HAS_TAG]->(t)",
        )

        def apply() -> None:
            for fid, tag in pairs:
                self._mirror.tag(fid, [tag])

        self._mirrored(apply)

    def link_facts(self, edge: str, src: str, dst: str, now: datetime, **props: Any) -> None:
        self.link_facts_many(edge, [(src, dst, now, props)])

    def link_facts_many(self, edge: str, links: Sequence[FactLink]) -> None:
        """``edge`` edges from (source id, target id, time, properties) rows."""
        if edge not in _FACT_EDGE_PROPS:
            raise ValueError(f"unknown fact edge {edge!r}")
        if not links:
            return
        names = ("created_at", *_FACT_EDGE_PROPS[edge])
        rows: list[dict[str, Any]] = [
            {"src": src, "dst": dst, "created_at": _to_db_time(now), **{n: props.get(n) for n in names[1:]}}
            for src, dst, now, props in links
        ]
        fields = ", ".join(f"{n}: v_{n}" for n in names)
        ends = [("a:Fact", "id", "src"), ("b:Fact", "id", "dst")]
        self._for_each(rows, ends, edge, names, f"CREATE (a)-[:{edge} {{{fields}}}]->(b)")

        def apply() -> None:
            for row in rows:
                stored = {n: row[n] for n in names if row[n] is not None}
                self._mirror.link_facts(edge, row["src"], row["dst"], stored)

        self._mirrored(apply)

    # ------------------------------------------------------------ entities

    def insert_entities(self, entities: Sequence[Entity]) -> None:
        """Create new entities, all in one statement."""
        if not entities:
            return
        entities = list(entities)
        rows = [
            {
                "id": e.id,
                "name": e.name,
                "name_key": name_key(e.name),
                "type": e.type,
                "aliases": list(e.aliases),
                "summary": e.summary,
                "mention_count": e.mention_count,
                "first_seen": _to_db_time(e.first_seen),
                "last_mentioned": _to_db_time(e.last_mentioned),
                "scope": e.scope,
            }
            for e in entities
        ]
        fields = ", ".join(f"{c}: {self._cast('Entity', c)}" for c in _ENTITY_COLUMNS)
        self._run(f"UNWIND $rows AS r CREATE (:Entity {{{fields}}})", {"rows": rows})

        def apply() -> None:
            for entity in entities:
                self._mirror.add_entity(entity.id, entity.name)

        self._mirrored(apply)

    def touch_entities(self, mentions: Mapping[str, tuple[int, datetime]]) -> None:
        """Count new mentions: entity id -> (how many, when the last one was)."""
        if not mentions:
            return
        self._for_each(
            [
                {"id": eid, "mention_count": n, "last_mentioned": _to_db_time(at)}
                for eid, (n, at) in mentions.items()
            ],
            [("e:Entity", "id", "id")],
            "Entity",
            ("mention_count", "last_mentioned"),
            "SET e.mention_count = e.mention_count + v_mention_count, e.last_mentioned = v_last_mentioned",
        )

    def all_entities(self) -> list[Entity]:
        return [_entity_from_row(row["e"]) for row in self._run("MATCH (e:Entity) RETURN e")]

    def link_about(self, fact_id: str, entity_id: str, role: str) -> None:
        """An ABOUT edge, unless the fact has this one already (asked of the mirror: a Kùzu
        match of the edge scanned a busy entity's edges, ~90 ms at 100k)."""
        with self._lock:
            if not self._mirror.has_about(fact_id, entity_id, role):
                self.link_about_many([(fact_id, entity_id, role)])

    def link_about_many(self, links: Sequence[tuple[str, str, str]]) -> None:
        """ABOUT edges from (fact id, entity id, role) rows the store does not hold yet.

        CREATE, not MERGE: kuzu 0.11.3 cannot MERGE on nodes found through the variables
        _for_each binds ("Cannot evaluate expression with type VARIABLE"), and a MERGE would
        scan a hub entity's edges. Callers write edges of new facts, or drop those stored.
        """
        if not links:
            return
        links = list(dict.fromkeys(links))  # one edge per row, however often it is asked for
        self._for_each(
            [{"fact": fid, "entity": eid, "role": role} for fid, eid, role in links],
            [("f:Fact", "id", "fact"), ("e:Entity", "id", "entity")],
            "ABOUT",
            ("role",),
            "CREATE (f)-[:ABOUT {role: v_role}]->(e)",
        )

        def apply() -> None:
            for fid, eid, role in links:
                self._mirror.link_about(fid, eid, role)

        self._mirrored(apply)

    def link_entities(
        self, src: str, dst: str, predicate: str, weight: float, fact_id: str | None, now: datetime
    ) -> None:
        self.link_entities_many([Relation(src, dst, predicate, weight, fact_id, now)])

    def link_entities_many(self, relations: Sequence[Relation]) -> None:
        """RELATES edges between entities, all in one statement."""
        if not relations:
            return
        rows: list[dict[str, Any]] = [
            {
                "src": rel.src,
                "dst": rel.dst,
                "predicate": rel.predicate,
                "weight": float(rel.weight),
                "fact_id": rel.fact_id,
                "created_at": _to_db_time(rel.at),
            }
            for rel in relations
        ]
        names = ("predicate", "weight", "fact_id", "created_at")
        fields = ", ".join(f"{n}: v_{n}" for n in names)
        ends = [("a:Entity", "id", "src"), ("b:Entity", "id", "dst")]
        self._for_each(rows, ends, "RELATES", names, f"CREATE (a)-[:RELATES {{{fields}}}]->(b)")

        def apply() -> None:
            for row in rows:
                stored = {n: row[n] for n in names if row[n] is not None}
                self._mirror.link_entities(row["src"], row["dst"], stored)

        self._mirrored(apply)

    def entity_names_for(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        with self._lock:
            return self._mirror.entity_names_for(fact_ids)

    def active_facts(self) -> Iterator[Fact]:
        for row in self._run(
            "MATCH (f:Fact) WHERE f.status IN $active RETURN f", {"active": list(ACTIVE_STATUSES)}
        ):
            yield _fact_from_row(row["f"])

    def has_edge(self, edge: str, src: str, dst: str) -> bool:
        if edge not in _FACT_EDGE_PROPS:
            raise ValueError(f"unknown fact edge {edge!r}")
        rows = self._run(
            f"MATCH (a:Fact {{id: $src}})-[:{edge}]->(b:Fact {{id: $dst}}) RETURN count(*) AS n",
            {"src": src, "dst": dst},
        )
        return bool(rows[0]["n"])

    def orphan_entities(self) -> list[str]:
        """Entities no fact is about and no relation touches."""
        rows = self._run(
            "MATCH (e:Entity) WHERE NOT EXISTS { MATCH (e)<-[:ABOUT]-(:Fact) } "
            "AND NOT EXISTS { MATCH (e)-[:RELATES]-(:Entity) } RETURN e.id AS id"
        )
        return [r["id"] for r in rows]

    def delete_entities(self, entity_ids: Sequence[str]) -> None:
        if entity_ids:
            ids = list(entity_ids)
            self._run("MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e", {"ids": ids})
            self._mirrored(lambda: self._mirror.delete_entities(ids))

    # ------------------------------------------------------------ traversal

    # Reads of the graph's shape come from the mirror (graph_mirror.py), which every write
    # above updates on commit: a walk costs no queries.

    def fact_edges(self, fact_ids: Sequence[str], edge_types: Sequence[str] = FACT_EDGES) -> list[EdgeRow]:
        """Fact-to-fact edges touching ``fact_ids``, either direction, with weight where stored."""
        unknown = set(edge_types) - set(FACT_EDGES)
        if unknown:
            raise ValueError(f"unknown fact edges {sorted(unknown)}")
        with self._lock:
            return self._mirror.fact_edges(fact_ids, edge_types)

    def about_edges(self, fact_ids: Sequence[str]) -> list[EdgeRow]:
        with self._lock:
            return self._mirror.about_edges(fact_ids)

    def fact_count(self) -> int:
        """How many facts the graph holds, any status (from the mirror: no query)."""
        with self._lock:
            return self._mirror.fact_count()

    def about_any(self, fact_ids: Iterable[str], entity_ids: Iterable[str]) -> set[str]:
        """Those of ``fact_ids`` that are ABOUT any of ``entity_ids``."""
        with self._lock:
            return self._mirror.about_any(fact_ids, entity_ids)

    def facts_about(self, entity_id: str, *, limit: int, statuses: Sequence[str]) -> list[str]:
        """The most recent facts ABOUT one entity: bounded, so a hub cannot flood expansion."""
        with self._lock:
            return self._mirror.facts_about(entity_id, limit=limit, statuses=statuses)

    def entity_relations(self, entity_ids: Sequence[str]) -> list[EdgeRow]:
        with self._lock:
            return self._mirror.entity_relations(entity_ids)

    def related_entities(self, entity_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, float]]:
        """Entities RELATES-linked to each of ``entity_ids`` (either way): the ``limit`` strongest."""
        with self._lock:
            return self._mirror.related_entities(entity_ids, limit=limit)

    def tag_neighbours(self, fact_ids: Sequence[str], *, limit: int) -> list[EdgeRow]:
        """Facts sharing a tag with ``fact_ids`` (at most ``limit`` rows in all)."""
        with self._lock:
            return self._mirror.tag_neighbours(fact_ids, limit=limit)

    def chain(self, fact_id: str, edge: str, *, newer: bool, max_depth: int = 30) -> list[tuple[str, int]]:
        """Facts reachable along ``edge`` from ``fact_id`` (or into it when ``newer``), with hop counts."""
        if edge not in _FACT_EDGE_PROPS:
            raise ValueError(f"unknown fact edge {edge!r}")
        pattern = f"<-[:{edge}*1..{int(max_depth)}]-" if newer else f"-[:{edge}*1..{int(max_depth)}]->"
        rows = self._run(
            f"MATCH p = (a:Fact {{id: $id}}){pattern}(b:Fact) RETURN b.id AS id, min(length(p)) AS hops "
            "ORDER BY hops",
            {"id": fact_id},
        )
        return [(r["id"], int(r["hops"])) for r in rows]

    def entities(self, entity_ids: Sequence[str]) -> dict[str, Entity]:
        if not entity_ids:
            return {}
        rows = self._run("MATCH (e:Entity) WHERE e.id IN $ids RETURN e", {"ids": list(entity_ids)})
        return {r["e"]["id"]: _entity_from_row(r["e"]) for r in rows}

    def all_edges(self) -> list[EdgeRow]:
        """Every edge in the graph (fact-fact, ABOUT, RELATES, HAS_TAG), for export and views."""
        edges: list[EdgeRow] = []
        for edge_type in FACT_EDGES:
            rows = self._run(
                f"MATCH (a:Fact)-[r:{edge_type}]->(b:Fact) RETURN a.id AS src, b.id AS dst, r AS props"
            )
            edges += [EdgeRow(edge_type, r["src"], r["dst"], _edge_props(r["props"])) for r in rows]
        rows = self._run(
            "MATCH (f:Fact)-[r:ABOUT]->(e:Entity) RETURN f.id AS src, e.id AS dst, r.role AS role"
        )
        edges += [EdgeRow("ABOUT", r["src"], r["dst"], {"role": r["role"]}) for r in rows]
        rows = self._run(
            "MATCH (a:Entity)-[r:RELATES]->(b:Entity) RETURN a.id AS src, b.id AS dst, r AS props"
        )
        edges += [EdgeRow("RELATES", r["src"], r["dst"], _edge_props(r["props"])) for r in rows]
        rows = self._run("MATCH (f:Fact)-[:HAS_TAG]->(t:Tag) RETURN f.id AS src, t.name AS tag")
        edges += [EdgeRow("HAS_TAG", r["src"], r["tag"], {}) for r in rows]
        return edges

    def count_by(self, column: str) -> dict[str, int]:
        """Fact counts grouped by kind, status or scope."""
        if column not in ("kind", "status", "scope"):
            raise ValueError(f"cannot group facts by {column!r}")
        rows = self._run(f"MATCH (f:Fact) RETURN f.{column} AS key, count(*) AS n")
        return {r["key"]: int(r["n"]) for r in rows}

    # ------------------------------------------------------------ stats

    def counts(self) -> dict[str, int]:
        facts = self._run("MATCH (f:Fact) RETURN count(f) AS n")[0]["n"]
        entities = self._run("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"]
        edges = self._run("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
        return {"facts": int(facts), "entities": int(entities), "edges": int(edges)}
