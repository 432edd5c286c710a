"""Every fact row in memory: read once by a background thread, then kept current by each commit.

Kùzu reads scattered wide rows slowly (~2 ms a fact at 100k), and a search reads ~30 of them.
The cache is an optimisation only: a fact it does not hold yet is read from the graph.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hippograph.domain.models import Fact
from hippograph.store.rows import facts_from_columns

log = logging.getLogger(__name__)

_SLICE = 5_000  # rows converted between checks for a closing store


class FactCache:
    def __init__(self, read_table: Callable[[], Mapping[str, list[Any]]]) -> None:
        """``read_table``: the whole Fact table as columns (``rows.FACT_COLUMNS``)."""
        self._facts: dict[str, Fact] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._loader = threading.Thread(target=self._load, args=(read_table,), name="fact-cache", daemon=True)
        self._loader.start()

    def close(self) -> None:
        self._closing.set()
        self._loader.join()

    def get(self, ids: Iterable[str]) -> dict[str, Fact]:
        """Those of ``ids`` the cache holds."""
        with self._lock:
            return {fid: self._facts[fid] for fid in ids if fid in self._facts}

    def put(self, facts: Iterable[Fact]) -> None:
        """Committed versions of facts (or versions just read from the graph)."""
        with self._lock:
            for fact in facts:
                self._facts[fact.id] = fact

    def drop_stale(self, stored: Mapping[str, Fact], *, repair: bool) -> int:
        """How many cached facts differ from ``stored`` (every fact as read); ``repair`` drops them."""
        with self._lock:
            stale = [fid for fid, fact in self._facts.items() if stored.get(fid) != fact]
            if repair:
                for fid in stale:
                    self._facts.pop(fid)
        return len(stale)

    def _load(self, read_table: Callable[[], Mapping[str, list[Any]]]) -> None:
        try:
            if self._closing.is_set():
                return
            columns = read_table()
            count = len(columns["id"])
            for start in range(0, count, _SLICE):  # in slices, so a closing store stops soon
                if self._closing.is_set():
                    return
                facts: Sequence[Fact] = facts_from_columns(columns, start, min(start + _SLICE, count))
                with self._lock:
                    for fact in facts:
                        # A write since the read above put a newer version here: keep that one.
                        self._facts.setdefault(fact.id, fact)
        except Exception:  # the cache is an optimisation: reads fall back to Kùzu
            log.exception("could not preload facts; reading them from the graph as needed")
