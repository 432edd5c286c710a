"""Receipts of proxied writes: committed with the write they record, so a retry is answered, not rerun."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from hippograph.store.kuzu_session import KuzuSession


class Receipt(NamedTuple):
    operation: str
    result: str | None  # the reply as JSON; None if the write committed but its reply was not stored


class Receipts:
    """The Receipt table: request id -> the operation it ran and its reply."""

    def __init__(self, session: KuzuSession) -> None:
        self._session = session

    def get(self, request_id: str) -> Receipt | None:
        rows = self._session.run(
            "MATCH (r:Receipt {id: $id}) RETURN r.operation AS operation, r.result AS result",
            {"id": request_id},
        )
        if not rows:
            return None
        return Receipt(rows[0]["operation"], rows[0]["result"] or None)

    def commit_with_next_write(self, request_id: str, operation: str, at: datetime) -> None:
        """Create the receipt inside the next transaction this thread commits: it exists exactly
        when the write does."""
        self._session.commit_with(
            "MERGE (r:Receipt {id: $id}) SET r.operation = $operation, r.result = '', r.at = $at",
            {"id": request_id, "operation": operation, "at": at},
        )

    def store_reply(self, request_id: str, operation: str, result: str, at: datetime) -> None:
        """Keep the reply (creating the receipt if the write committed none: a write without a
        transaction, or one that changed nothing)."""
        self._session.drop_rider()
        self._session.run(
            "MERGE (r:Receipt {id: $id}) SET r.operation = $operation, r.result = $result, r.at = $at",
            {"id": request_id, "operation": operation, "result": result, "at": at},
        )

    def abandon(self) -> None:
        """The write failed: its receipt must not ride on a later one."""
        self._session.drop_rider()

    def drop_before(self, moment: datetime) -> int:
        """Delete receipts older than ``moment`` (retries come within a minute); how many."""
        rows = self._session.run(
            "MATCH (r:Receipt) WHERE r.at < $moment DELETE r RETURN count(*) AS n", {"moment": moment}
        )
        return int(rows[0]["n"]) if rows else 0

    def drop_all(self) -> None:
        """Delete every receipt (a purge: replies hold the text of facts)."""
        self._session.run("MATCH (r:Receipt) DELETE r")
