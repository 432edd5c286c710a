"""Listing facts by recency: the newest facts of some scopes, kinds and statuses, and how many there are."""

from __future__ import annotations

from collections.abc import Collection

from hippograph.store.kuzu_session import KuzuSession

_WHERE = "WHERE f.scope IN $scopes AND f.kind IN $kinds AND f.status IN $statuses"


class FactListing:
    """Pages of the Fact table, newest first (what the explorer draws and lists on its timeline)."""

    def __init__(self, session: KuzuSession) -> None:
        self._session = session

    def newest(
        self, scopes: Collection[str], kinds: Collection[str], statuses: Collection[str], *, limit: int
    ) -> tuple[list[str], int]:
        """Ids of the ``limit`` most recently created facts in ``scopes`` of ``kinds`` and
        ``statuses``, newest first, and the number of such facts."""
        params = {"scopes": sorted(scopes), "kinds": sorted(kinds), "statuses": sorted(statuses)}
        with self._session.lock:  # the count and the page from one state of the table
            total = self._session.run(f"MATCH (f:Fact) {_WHERE} RETURN count(f) AS n", params)[0]["n"]
            rows = self._session.run(
                f"MATCH (f:Fact) {_WHERE} RETURN f.id AS id "
                "ORDER BY f.created_at DESC, f.id DESC LIMIT $limit",
                {**params, "limit": limit},
            )
        return [row["id"] for row in rows], int(total)
