"""The graph index: the graph's shape (ids, statuses, edges, tags, claims, sessions) on disk, in
SQLite, so a graph walk costs index lookups instead of engine traversals, and memory stays flat.

Kùzu stays the source of truth. ``KuzuGraphStore`` hands this index each of its own writes once
the write commits (``publish``), so the two never disagree inside the one process that owns the
data dir. Until issue 22 it lived in Python dicts (the "mirror": 65 MB at 100k facts, read at
every open). SQLite keeps a bounded page cache of it (``cache_bytes``); a lookup of a few dozen
ids costs the same at any size. Kùzu could not be asked instead: it traverses from a set of nodes
by scanning the edge table (the ABOUT edges of 40 facts: 36-140 ms at 100k facts).

The file is derived, like the vector index: nothing is lost with it. An open uses it when it holds
every commit of the graph: after a clean close, which writes the same fresh token into it and into
the graph's Meta, or after a kill when it follows the graph (``index_trust``); any other open (a
restore, a copy of the graph alone, a machine crash) builds it again from the graph. Deleted rows
are overwritten (``secure_delete``), and the log is emptied after a purge (``checkpoint``): a
purged fact's claim, tags and names leave the file with it.

Every method takes the lock, and ``publish`` applies all the changes of one commit in one
SQLite transaction under it, so a reader sees all or none.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from hippograph.domain.models import ACTIVE_STATUSES, Entity
from hippograph.store import entity_table
from hippograph.store.cache_budget import DEFAULT_SHARES
from hippograph.store.graph_values import (
    ClaimKey,
    SessionKey,
    distinct_scopes,
    dump_props,
    ids_param,
    load_props,
    micros,
    split_props,
)
from hippograph.store.index_schema import FORMAT, INDEXES, NEIGHBOURS_OF, PARTS, SCHEMA, TABLES, WALK_WEIGHT
from hippograph.store.index_trust import IndexTrust

log = logging.getLogger(__name__)

_ACTIVE = tuple(ACTIVE_STATUSES)

# SQLite's page cache for the index by default (its share of the memory budget in a store).
_CACHE_BYTES = DEFAULT_SHARES.graph_index
_TOKEN = "clean_close_token"
# Kept with the token at a clean close: the fact count and the scopes written.
_COUNTS = ("fact_count", "scopes_written")


def _relates_row(src: str, dst: str, props: Mapping[str, Any]) -> tuple[Any, ...]:
    at = props.get("created_at")
    time = micros(at) if isinstance(at, datetime) else None
    return src, dst, props.get("predicate"), props.get("weight"), props.get("fact_id"), time


def _claim_text(key: ClaimKey | None) -> str | None:
    return None if key is None else "\x1f".join(key)


class GraphIndex:
    """The index over one SQLite file (or ``:memory:``); see the module doc."""

    def __init__(self, path: Path | str, *, cache_bytes: int = _CACHE_BYTES) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        for pragma in (
            "journal_mode=WAL",
            "synchronous=OFF",
            "secure_delete=ON",
            "temp_store=MEMORY",
            f"cache_size=-{max(1, cache_bytes >> 10)}",  # in KiB
        ):
            self.db.execute(f"PRAGMA {pragma}")
        (version,) = self.db.execute("PRAGMA user_version").fetchone()
        if version != FORMAT and self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            self.db.close()
            raise sqlite3.DatabaseError(f"its format is {version}, not {FORMAT}")
        self.db.executescript(SCHEMA + INDEXES)
        self.db.execute(f"PRAGMA user_version = {FORMAT}")
        self.names = entity_table.EntityRows(self.db, self.lock)  # entities by id and name
        self._count = 0
        self.stale = False  # a commit's changes failed to reach it (see publish)
        self.trust = IndexTrust(self.db, self.lock)  # which graph it holds after a kill
        # Every scope a fact or entity was written in (a superset once entities are deleted):
        # a view that sees all of them need not filter by scope.
        self._scopes: set[str] = set()
        self._recount(kept=True)

    @classmethod
    def beside(cls, graph_file: Path, *, cache_bytes: int = _CACHE_BYTES) -> GraphIndex:
        """The index file beside ``graph_file``, made afresh if it is unreadable or of another
        layout (it is derived: nothing is lost; the graph's open then builds it)."""
        path = graph_file.with_name(graph_file.name + ".index")
        try:
            index = cls(path, cache_bytes=cache_bytes)
            index.token()
            return index
        except sqlite3.DatabaseError as err:
            log.warning("the graph index %s is unreadable (%s): building it again from the graph", path, err)
            path.unlink(missing_ok=True)
            return cls(path, cache_bytes=cache_bytes)

    def _recount(self, *, kept: bool = False) -> None:
        """Count the facts and scopes (``kept``: take a clean close's counts; a scan of 1M: 0.4 s)."""
        stored = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", _COUNTS).fetchall())
        if kept and self.token() and len(stored) == len(_COUNTS):
            self._count, self._scopes = int(stored[_COUNTS[0]]), set(json.loads(stored[_COUNTS[1]]))
            return
        with self.lock:
            self._count = self.db.execute("SELECT count(*) FROM fact").fetchone()[0]
            self._scopes = {s for (s,) in self.db.execute(distinct_scopes("fact", "entity"))}

    # ------------------------------------------------------------ lifetime

    def token(self) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (_TOKEN,)).fetchone()
        return str(row[0]) if row else ""

    def begin(self, token: str) -> None:
        """Say the file holds the graph whose Meta token is ``token``, as opened now; until a
        clean close, no longer matching it by token (``set_token('')``)."""
        with self._batch():
            self.trust.begin(token)
        self.trust.confirm()
        self.set_token("")

    def checkpoint(self) -> None:
        """Write the log into the file and empty it (after a purge: the log held the erased rows)."""
        with self.lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def set_token(self, token: str) -> None:
        """Say the file matches the graph whose Meta holds ``token`` ('' : it may not)."""
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_TOKEN, token))
            if token:
                counts = zip(_COUNTS, (str(self._count), json.dumps(sorted(self._scopes))), strict=True)
                self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", counts)
            else:
                self.db.execute("DELETE FROM meta WHERE key IN (?, ?)", _COUNTS)

    def build(self, fill: Callable[[GraphIndex], None]) -> None:
        """Empty the index and ``fill`` it afresh (with the ``load_*`` methods), its secondary
        indexes made once the rows are in."""
        with self.lock:
            for name in re.findall(r"CREATE INDEX IF NOT EXISTS (\w+)", INDEXES):
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
            with self._batch():
                for table in TABLES:
                    self.db.execute(f"DELETE FROM {table}")
            fill(self)
            with self._batch():
                self.db.execute(
                    "UPDATE about SET created = (SELECT f.created FROM fact f WHERE f.id = about.fact)"
                )
                self.db.execute(NEIGHBOURS_OF.format(where="1"))
            self.db.executescript(INDEXES)
        self._recount()

    def close(self) -> None:
        with self.lock:
            self.db.close()

    @contextmanager
    def _batch(self) -> Iterator[None]:
        with self.lock:
            self.db.execute("BEGIN")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    # ------------------------------------------------------------ loading (whole tables)

    def load_facts(
        self,
        ids: Sequence[str],
        scopes: Sequence[str],
        statuses: Sequence[str],
        created: Sequence[datetime],
        claims: Sequence[ClaimKey | None],
        sessions: Sequence[str | None],
    ) -> None:
        """``claims``: each fact's ``claim_key``; ``sessions``: its session id, if any."""
        rows = zip(
            ids, scopes, statuses, map(micros, created), map(_claim_text, claims), sessions, strict=True
        )
        with self._batch():
            self.db.executemany("INSERT OR REPLACE INTO fact VALUES (?, ?, ?, ?, ?, ?)", rows)

    def load_entities(self, entities: Sequence[Entity]) -> None:
        """``entities`` in the order they were made."""
        with self._batch():
            entity_table.insert(self.db, entities)
            self._scopes.update(e.scope for e in entities)

    def load_fact_edges(
        self, edge_type: str, srcs: Sequence[str], dsts: Sequence[str], props: Sequence[Mapping[str, Any]]
    ) -> None:
        rows = ((edge_type, s, d, *split_props(p)) for s, d, p in zip(srcs, dsts, props, strict=True))
        with self._batch():
            self.db.executemany("INSERT INTO link(type, src, dst, at, props) VALUES (?, ?, ?, ?, ?)", rows)

    def load_about(
        self,
        entity_ids: Sequence[str],
        fact_ids: Sequence[str],
        roles: Sequence[str],
        positions: Sequence[int],
    ) -> None:
        """``positions``: the order each fact's edges were made in (``build`` adds their facts' times)."""
        rows = zip(fact_ids, entity_ids, roles, positions, strict=True)
        with self._batch():
            self.db.executemany(
                "INSERT OR IGNORE INTO about(fact, entity, role, created, pos) VALUES (?, ?, ?, 0, ?)", rows
            )

    def load_relates(
        self, srcs: Sequence[str], dsts: Sequence[str], props: Sequence[Mapping[str, Any]]
    ) -> None:
        rows = (_relates_row(s, d, p) for s, d, p in zip(srcs, dsts, props, strict=True))
        with self._batch():
            self.db.executemany(
                "INSERT INTO relates(src, dst, predicate, weight, fact_id, at) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def load_tags(self, fact_ids: Sequence[str], tags: Sequence[str]) -> None:
        with self._batch():
            self.db.executemany(
                "INSERT OR IGNORE INTO tag(fact, tag) VALUES (?, ?)", zip(fact_ids, tags, strict=True)
            )

    # ------------------------------------------------------------ writes (after commit)

    def publish(self, changes: Sequence[Callable[[], None]]) -> None:
        """Apply the changes of one commit (calls of the writes below) together. If they fail
        (a full disk), the graph has them and the index does not: it is ``stale`` from then on,
        so the next open builds it again (``doctor`` repairs it sooner)."""
        try:
            with self._batch():
                for change in changes:
                    change()
                self.trust.published()
        except BaseException:
            self.stale = True
            raise
        self.trust.confirm()

    def add_fact(
        self,
        fact_id: str,
        scope: str,
        status: str,
        created_at: datetime,
        claim: ClaimKey | None,
        session: str | None,
    ) -> None:
        with self.lock:
            new = self.db.execute("SELECT 1 FROM fact WHERE id = ?", (fact_id,)).fetchone() is None
            self.db.execute(
                "INSERT OR REPLACE INTO fact VALUES (?, ?, ?, ?, ?, ?)",
                (fact_id, scope, status, micros(created_at), _claim_text(claim), session),
            )
            self._count += new
            self._scopes.add(scope)

    def set_status(self, fact_id: str, status: str) -> None:
        with self.lock:
            self.db.execute("UPDATE fact SET status = ? WHERE id = ?", (status, fact_id))

    def add_entity(self, entity: Entity) -> None:
        with self.lock:
            entity_table.insert(self.db, [entity])
            self._scopes.add(entity.scope)

    def retype_entities(self, types: Mapping[str, str]) -> None:
        with self.lock:
            entity_table.retype(self.db, types)

    def count_mentions(self, mentions: Mapping[str, tuple[int, datetime]]) -> None:
        """New mentions: entity id -> (how many, when the last one was)."""
        with self.lock:
            entity_table.count_mentions(self.db, mentions)

    def link_facts(self, edge_type: str, src: str, dst: str, props: Mapping[str, Any]) -> None:
        """Kùzu's MATCH ... CREATE makes nothing when an end is missing: nor does this."""
        with self.lock:
            self.db.execute(
                "INSERT INTO link(type, src, dst, at, props) SELECT ?, ?, ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM fact WHERE id = ?) AND EXISTS (SELECT 1 FROM fact WHERE id = ?)",
                (edge_type, src, dst, *split_props(props), src, dst),
            )

    def reweigh(self, src: str, dst: str, relation: str, weight: float) -> None:
        """The RELATES_TO edge of ``relation`` from ``src`` to ``dst`` now weighs ``weight``."""
        with self.lock:
            for seq, text in self.db.execute(
                "SELECT seq, props FROM link WHERE src = ? AND dst = ? AND props IS NOT NULL", (src, dst)
            ).fetchall():
                props = dict(load_props(text))
                if props.get("relation") == relation:
                    props["weight"] = weight
                    self.db.execute("UPDATE link SET props = ? WHERE seq = ?", (dump_props(props), seq))

    def link_about(self, fact_id: str, entity_id: str, role: str) -> None:
        with self.lock:
            self.db.execute(
                "INSERT OR IGNORE INTO about(fact, entity, role, created, pos) SELECT ?, ?, ?, created, "
                "(SELECT COALESCE(MAX(pos), -1) + 1 FROM about WHERE fact = ?) FROM fact "
                "WHERE id = ? AND EXISTS (SELECT 1 FROM entity WHERE id = ?)",
                (fact_id, entity_id, role, fact_id, fact_id, entity_id),
            )

    def link_entities(self, src: str, dst: str, props: Mapping[str, Any]) -> None:
        with self.lock:
            self.db.execute(
                "INSERT INTO relates(src, dst, predicate, weight, fact_id, at) SELECT ?, ?, ?, ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM entity WHERE id = ?) "
                "AND EXISTS (SELECT 1 FROM entity WHERE id = ?)",
                (*_relates_row(src, dst, props), src, dst),
            )
            if self.db.execute("SELECT changes()").fetchone()[0]:
                self.db.executemany(
                    f"INSERT INTO neighbour VALUES (?, ?, {WALK_WEIGHT.format(w='?')}) "
                    "ON CONFLICT(a, b) DO UPDATE SET w = max(w, excluded.w)",
                    [(src, dst, props.get("weight")), (dst, src, props.get("weight"))],
                )

    def tag(self, fact_id: str, tags: Iterable[str]) -> None:
        with self.lock:
            self.db.executemany(
                "INSERT OR IGNORE INTO tag(fact, tag) SELECT ?, ? "
                "WHERE EXISTS (SELECT 1 FROM fact WHERE id = ?)",
                ((fact_id, tag, fact_id) for tag in tags),
            )

    def purge_fact(self, fact_id: str, status: str) -> None:
        """A fact became a tombstone: it keeps its fact-to-fact edges and loses everything else."""
        with self.lock:
            self.db.execute("UPDATE fact SET status = ?, claim = NULL WHERE id = ?", (status, fact_id))
            ends = self.db.execute("SELECT src, dst FROM relates WHERE fact_id = ?", (fact_id,)).fetchall()
            for table, column in (("about", "fact"), ("tag", "fact"), ("relates", "fact_id")):
                self.db.execute(f"DELETE FROM {table} WHERE {column} = ?", (fact_id,))
            if ends:  # what the entities it related are to each other without it
                touched = ids_param({end for pair in ends for end in pair})
                given = "IN (SELECT value FROM json_each(?1))"
                self.db.execute(f"DELETE FROM neighbour WHERE a {given} OR b {given}", (touched,))
                self.db.execute(NEIGHBOURS_OF.format(where=f"src {given} OR dst {given}"), (touched,))

    def delete_entities(self, entity_ids: Collection[str]) -> None:
        ids = ids_param(entity_ids)
        given = "IN (SELECT value FROM json_each(?1))"
        with self.lock:
            entity_table.delete(self.db, entity_ids)
            for table, where in (
                ("about", f"entity {given}"),
                ("relates", f"src {given} OR dst {given}"),
                ("neighbour", f"a {given} OR b {given}"),
            ):
                self.db.execute(f"DELETE FROM {table} WHERE {where}", (ids,))

    # ------------------------------------------------------------ reads

    def last_facts_in_sessions(self, sessions: Iterable[SessionKey]) -> dict[SessionKey, str]:
        """The id of the latest fact (by creation time, then id) of each (scope, session) that has one."""
        found = {}
        with self.lock:
            for scope, session in sessions:
                row = self.db.execute(
                    "SELECT id FROM fact WHERE scope = ? AND session = ? "
                    "ORDER BY created DESC, id DESC LIMIT 1",
                    (scope, session),
                ).fetchone()
                if row is not None:
                    found[(scope, session)] = row[0]
        return found

    def fact_count(self) -> int:
        """Every fact, whatever its scope (the walk's entity specificity is over the whole store)."""
        return self._count

    def scopes_written(self) -> set[str]:
        """Every scope a fact or entity was written in (and perhaps a few no entity holds any more)."""
        with self.lock:
            return set(self._scopes)

    def fact_statuses(self) -> dict[str, str]:
        """Every fact id and its status."""
        with self.lock:
            return dict(self.db.execute("SELECT id, status FROM fact").fetchall())

    def has_about(self, fact_id: str, entity_id: str, role: str) -> bool:
        with self.lock:
            row = self.db.execute(
                "SELECT 1 FROM about WHERE fact = ? AND entity = ? AND role = ?", (fact_id, entity_id, role)
            ).fetchone()
        return row is not None

    def active_claims(self, keys: Iterable[ClaimKey]) -> dict[ClaimKey, list[str]]:
        """The active facts of each ``claim_key``, oldest first."""
        marks = ", ".join("?" * len(_ACTIVE))
        query = f"SELECT id FROM fact WHERE claim = ? AND status IN ({marks}) ORDER BY created, id"
        with self.lock:
            return {key: [r[0] for r in self.db.execute(query, (_claim_text(key), *_ACTIVE))] for key in keys}

    def differences(self, stored: Path, *, repair: bool) -> list[str]:
        """How this index differs from the one in the file ``stored`` (just built from the
        graph), by part, compared in SQLite (nothing of either is held in Python); ``repair``
        makes this one a copy of it."""
        with self.lock:
            self.db.execute("ATTACH DATABASE ? AS stored", (str(stored),))
            try:
                problems = []
                for part, query in PARTS.items():
                    live, disk = query.format(db="main"), query.format(db="stored")
                    extra = self.db.execute(f"SELECT count(*) FROM ({live} EXCEPT {disk})").fetchone()[0]
                    missing = self.db.execute(f"SELECT count(*) FROM ({disk} EXCEPT {live})").fetchone()[0]
                    if extra or missing:
                        problems.append(f"graph index {part}: {extra} extra, {missing} missing")
                if problems and repair:
                    with self._batch():
                        for table in TABLES:
                            self.db.execute(f"DELETE FROM main.{table}")
                            self.db.execute(f"INSERT INTO main.{table} SELECT * FROM stored.{table}")
            finally:
                self.db.execute("DETACH DATABASE stored")
        if problems and repair:
            self._recount()
            self.stale = False
        return problems

    def snapshot(self) -> dict[str, set[Any]]:
        """Everything the index holds, order-free, to compare two indexes (small ones: tests)."""
        with self.lock:
            return {part: set(self.db.execute(query.format(db="main"))) for part, query in PARTS.items()}
