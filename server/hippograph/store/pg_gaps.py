"""The questions memory could not answer with confidence, in the memory's PostgreSQL database
(``hg_gap``): the same log as ``gap_log`` keeps in ``gaps.sqlite``, shared by every server of
the memory.

A question is counted once however many servers are asked it at once (one upsert per asking),
at most ``KEPT`` are kept a scope (the least recently asked go first), and a purge empties the
log (a question may quote what was erased).
"""

from __future__ import annotations

from collections.abc import Collection

from hippograph.store.gap_log import KEPT, question_key
from hippograph.store.pg_database import PgDatabase
from hippograph.store.seam import Gap


class PgGapLog:
    """The log in the memory's database; every method is thread-safe (the pool's)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def close(self) -> None:
        """Nothing of its own to close: the database is the memory's."""

    def record(self, scope: str, question: str, at: str) -> None:
        """Count one more asking of ``question`` in ``scope`` (the same words in any case and
        spacing are one question), at ``at`` (ISO 8601)."""
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO hg_gap VALUES (%s, %s, %s, 1, %s) ON CONFLICT (scope, key) DO UPDATE SET "
                "asked = hg_gap.asked + 1, last = greatest(hg_gap.last, excluded.last), "
                "question = excluded.question",
                (scope, question_key(question), question, at),
            )
            conn.execute(
                "DELETE FROM hg_gap WHERE scope = %s AND key NOT IN "
                "(SELECT key FROM hg_gap WHERE scope = %s ORDER BY last DESC, key LIMIT %s)",
                (scope, scope, KEPT),
            )

    def gaps(self, scopes: Collection[str], *, limit: int) -> list[Gap]:
        """The questions of ``scopes``, the most asked first, then the most recent."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT scope, question, asked, last FROM hg_gap WHERE scope = ANY(%s) "
                "ORDER BY asked DESC, last DESC LIMIT %s",
                (list(scopes), limit),
            ).fetchall()
        return [Gap(str(s), str(q), int(n), str(last)) for s, q, n, last in rows]

    def clear(self) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM hg_gap")
