"""The facts read or written lately, in memory, within a byte budget: least recently used go first.

An optimisation only: a fact the cache does not hold is read from the graph (a primary-key read
of 40 facts cost ~2 ms at 100k facts, measured on ladybug 0.22), so the budget trades speed,
never correctness. Holding every fact instead cost ~700 B a fact of RSS: 70 MB at 100k, 700 MB
at a million, and a whole-table read competing with the first searches after a start.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from hippograph.domain.models import Fact

# A Fact's own bytes beside its strings' characters (measured with tracemalloc: ~370 B for the
# object, its enums shared, plus ~50 B per string and ~50 B per datetime set).
_FACT_OVERHEAD = 800


def fact_bytes(fact: Fact) -> int:
    """What holding ``fact`` costs, near enough to keep a budget."""
    text = (fact.content, fact.evidence, fact.subject, fact.object, fact.status_reason, *fact.tags)
    return _FACT_OVERHEAD + sum(len(part) for part in text if part)


class FactCache:
    def __init__(self, budget_bytes: int) -> None:
        self._budget = budget_bytes
        self._facts: OrderedDict[str, tuple[Fact, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, ids: Iterable[str]) -> dict[str, Fact]:
        """Those of ``ids`` the cache holds (each now the most recently used)."""
        found: dict[str, Fact] = {}
        with self._lock:
            for fid in ids:
                held = self._facts.get(fid)
                if held is not None:
                    self._facts.move_to_end(fid)
                    found[fid] = held[0]
        return found

    def put(self, facts: Iterable[Fact]) -> None:
        """Committed versions of facts (or versions just read from the graph)."""
        with self._lock:
            for fact in facts:
                size = fact_bytes(fact)
                old = self._facts.pop(fact.id, None)
                if old is not None:
                    self._bytes -= old[1]
                self._facts[fact.id] = (fact, size)
                self._bytes += size
            while self._bytes > self._budget and self._facts:
                _, (_, size) = self._facts.popitem(last=False)
                self._bytes -= size

    def take(self, ids: Iterable[str]) -> dict[str, Fact]:
        """Those of ``ids`` the cache holds, no longer held (being written: their committed
        versions come back on commit)."""
        taken: dict[str, Fact] = {}
        with self._lock:
            for fid in ids:
                held = self._facts.pop(fid, None)
                if held is not None:
                    taken[fid] = held[0]
                    self._bytes -= held[1]
        return taken

    def held_bytes(self) -> tuple[int, int]:
        """(facts held, their estimated bytes)."""
        with self._lock:
            return len(self._facts), self._bytes

    def drop_stale(self, stored: Mapping[str, Fact], *, repair: bool) -> int:
        """How many cached facts differ from ``stored`` (the graph's versions of at least these
        ids); ``repair`` drops them."""
        with self._lock:
            stale = [fid for fid, (fact, _) in self._facts.items() if stored.get(fid) != fact]
            if repair:
                for fid in stale:
                    self._bytes -= self._facts.pop(fid)[1]
        return len(stale)
