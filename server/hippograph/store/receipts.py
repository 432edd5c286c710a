"""Receipts of proxied writes: committed with the write they record, so a retry is answered, not rerun."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from datetime import datetime

from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.seam import Receipt


class Receipts:
    """The Receipt table: request id -> the operation it ran and its reply."""

    def __init__(self, session: KuzuSession) -> None:
        self._session = session

    def holding(self, request_id: str) -> AbstractContextManager[None]:
        """Nothing beyond the process's own hold: one process owns an embedded graph."""
        return nullcontext()

    def get(self, request_id: str) -> Receipt | None:
        rows = self._session.run(
            "MATCH (r:Receipt {id: $id}) OPTIONAL MATCH (p:Reply {id: $id}) "
            "RETURN r.operation AS operation, p.result AS result",
            {"id": request_id},
        )
        if not rows:
            return None
        return Receipt(rows[0]["operation"], rows[0]["result"])

    def commit_with_next_write(self, request_id: str, operation: str, at: datetime) -> None:
        """Create the receipt inside the next transaction this thread commits: it exists exactly
        when the write does."""
        self._session.commit_with(
            "CREATE (:Receipt {id: $id, operation: $operation, at: $at})",
            {"id": request_id, "operation": operation, "at": at},
        )

    def waiting(self) -> bool:
        """Whether this thread's receipt still waits for its write (nothing of the call is written)."""
        return self._session.has_rider()

    def store_reply(self, request_id: str, operation: str, result: str, at: datetime) -> None:
        """Keep the reply, and the receipt if the write committed none (a write without a
        transaction, or one that changed nothing). Each row is created once, never updated."""
        if self._session.drop_rider():
            self._session.run(
                "CREATE (:Receipt {id: $id, operation: $operation, at: $at})",
                {"id": request_id, "operation": operation, "at": at},
            )
        self._session.run(
            "CREATE (:Reply {id: $id, result: $result, at: $at})",
            {"id": request_id, "result": result, "at": at},
        )

    def abandon(self) -> None:
        """The write failed: its receipt must not ride on a later one."""
        self._session.drop_rider()

    def drop_before(self, moment: datetime) -> None:
        """Delete receipts and replies older than ``moment`` (retries come within a minute)."""
        self._session.run("MATCH (p:Reply) WHERE p.at < $moment DELETE p", {"moment": moment})
        self._session.run("MATCH (r:Receipt) WHERE r.at < $moment DELETE r", {"moment": moment})

    def drop_all(self) -> None:
        """Delete every receipt and reply (a purge: replies quote facts)."""
        self._session.run("MATCH (p:Reply) DELETE p")
        self._session.run("MATCH (r:Receipt) DELETE r")
