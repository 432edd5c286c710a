"""The graph store's records beside the graph, in the memory's PostgreSQL database: receipts of
writes (what makes a retried write run once, on any server), and the whole-graph reads of the
census (export, stats) and of the listing (the explorer's newest facts)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from contextlib import AbstractContextManager
from datetime import datetime

from hippograph.domain.errors import InternalError
from hippograph.domain.models import FACT_EDGES, EdgeType
from hippograph.store.graph_values import EdgeRow
from hippograph.store.pg_session import PgSession
from hippograph.store.seam import Receipt

_RECEIPT = "INSERT INTO hg_receipt VALUES (%s, %s, %s)"


class PgReceipts:
    """Request id -> the operation it ran and its reply (``hg_receipt``, ``hg_reply``)."""

    def __init__(self, session: PgSession) -> None:
        self._s = session

    def holding(self, request_id: str) -> AbstractContextManager[None]:
        """Held while a write with this request id runs, on every server: a retry sent to
        another server at once waits, then finds the receipt and the first reply."""
        key = int.from_bytes(hashlib.blake2b(request_id.encode(), digest_size=8).digest(), "big", signed=True)
        return self._s._db.claiming(key)

    def get(self, request_id: str) -> Receipt | None:
        rows = self._s._rows(
            "SELECT r.operation, p.result FROM hg_receipt r LEFT JOIN hg_reply p ON p.id = r.id "
            "WHERE r.id = %s",
            (request_id,),
        )
        return Receipt(str(rows[0][0]), rows[0][1]) if rows else None

    def commit_with_next_write(self, request_id: str, operation: str, at: datetime) -> None:
        """Create the receipt inside the next transaction this thread commits: it exists exactly
        when the write does."""
        self._s.commit_with(_RECEIPT, (request_id, operation, at))

    def waiting(self) -> bool:
        """Whether this thread's receipt still waits for its write (nothing of the call is written)."""
        return self._s.has_rider()

    def store_reply(self, request_id: str, operation: str, result: str, at: datetime) -> None:
        """Keep the reply, and the receipt if the write committed none (a write without a
        transaction, or one that changed nothing). Each row is created once, never updated."""
        waiting = self._s.drop_rider() is not None
        with self._s._conn() as conn:
            if waiting:
                conn.execute(_RECEIPT, (request_id, operation, at))
            conn.execute("INSERT INTO hg_reply VALUES (%s, %s, %s)", (request_id, result, at))

    def abandon(self) -> None:
        """The write failed: its receipt must not ride on a later one."""
        self._s.drop_rider()

    def drop_before(self, moment: datetime) -> None:
        """Delete receipts and replies older than ``moment`` (retries come within a minute)."""
        with self._s._conn() as conn:
            conn.execute("DELETE FROM hg_reply WHERE at < %s", (moment,))
            conn.execute("DELETE FROM hg_receipt WHERE at < %s", (moment,))

    def drop_all(self) -> None:
        """Delete every receipt and reply (a purge: replies quote facts)."""
        with self._s._conn() as conn:
            conn.execute("DELETE FROM hg_reply")
            conn.execute("DELETE FROM hg_receipt")


class PgCensus:
    """Reads of the whole graph, for export and stats."""

    def __init__(self, session: PgSession) -> None:
        self._s = session

    def all_edges(self) -> list[EdgeRow]:
        """Every edge (fact-fact, ABOUT, RELATES, HAS_TAG to the tag's name), type by type."""
        edges: list[EdgeRow] = []
        links = self._s._stream("SELECT type, src, dst, created_at, props FROM hg_link ORDER BY seq")
        by_type: dict[str, list[EdgeRow]] = {}
        for kind, src, dst, at, props in links:
            found = {"created_at": at} if at is not None else {}
            found.update(props if isinstance(props, dict) else json.loads(props))
            by_type.setdefault(kind, []).append(EdgeRow(EdgeType(kind), src, dst, found))
        for kind in FACT_EDGES:
            edges += by_type.get(kind, [])
        for fid, eid, role in self._s._stream("SELECT fact, entity, role FROM hg_about ORDER BY seq"):
            edges.append(EdgeRow(EdgeType.ABOUT, fid, eid, {"role": role}))
        relates = self._s._stream(
            "SELECT src, dst, predicate, weight, fact_id, created_at FROM hg_relates ORDER BY seq"
        )
        for src, dst, predicate, weight, fact_id, at in relates:
            values = (("predicate", predicate), ("weight", weight), ("fact_id", fact_id), ("created_at", at))
            edges.append(EdgeRow(EdgeType.RELATES, src, dst, {k: v for k, v in values if v is not None}))
        for fid, tag in self._s._stream("SELECT fact, tag FROM hg_tag ORDER BY seq"):
            edges.append(EdgeRow(EdgeType.HAS_TAG, fid, tag, {}))
        return edges

    def count_by(self, column: str) -> dict[str, int]:
        """Fact counts grouped by kind, status or scope."""
        if column not in ("kind", "status", "scope"):
            raise InternalError(f"cannot group facts by {column!r}")
        rows = self._s._rows(f"SELECT {column}, count(*) FROM hg_fact GROUP BY {column}")
        return {str(key): int(n) for key, n in rows}

    def counts(self) -> dict[str, int]:
        (facts, entities, edges), *_ = self._s._rows(
            "SELECT (SELECT count(*) FROM hg_fact), (SELECT count(*) FROM hg_entity), "
            "(SELECT count(*) FROM hg_link) + (SELECT count(*) FROM hg_about) "
            "+ (SELECT count(*) FROM hg_relates) "
            "+ (SELECT count(*) FROM hg_tag)"
        )
        return {"facts": int(facts), "entities": int(entities), "edges": int(edges)}


class PgListing:
    """Pages of the facts, newest first (what the explorer draws and lists on its timeline)."""

    def __init__(self, session: PgSession) -> None:
        self._s = session

    def newest(
        self, scopes: Collection[str], kinds: Collection[str], statuses: Collection[str], *, limit: int
    ) -> tuple[list[str], int]:
        """Ids of the ``limit`` most recently created facts in ``scopes`` of ``kinds`` and
        ``statuses``, newest first, and the number of such facts (both from one snapshot)."""
        where = "WHERE scope = ANY(%s) AND kind = ANY(%s) AND status = ANY(%s)"
        params = (sorted(scopes), sorted(kinds), sorted(statuses))
        with self._s._conn() as conn:
            total = conn.execute(f"SELECT count(*) FROM hg_fact {where}", params).fetchone()[0]
            rows = conn.execute(
                f"SELECT id FROM hg_fact {where} ORDER BY created_at DESC, id DESC LIMIT %s", (*params, limit)
            ).fetchall()
        return [str(fid) for (fid,) in rows], int(total)
