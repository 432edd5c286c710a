"""A durable queue of fact accesses, so reinforcement never slows a reply nor gets lost.

``search``/``recall`` append one line per returned fact (sequence number, fact id, time)
and return at once; the service applies the pending lines to the graph in batches and
records the last applied sequence number in the same transaction. A line written
before a crash is applied at the next start, exactly once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


@dataclass(frozen=True)
class Access:
    seq: int
    fact_id: str
    at: datetime


class AccessLog:
    def __init__(self, path: Path, applied_seq: int) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._pending = [a for a in self._read() if a.seq > applied_seq]
        self._seq = max([applied_seq, *(a.seq for a in self._pending)])
        self._rewrite(self._pending)

    def _read(self) -> list[Access]:
        if not self.path.exists():
            return []
        accesses = []
        for line in self.path.read_text("utf-8").splitlines():
            parts = line.split("\t")
            # A torn last line (crash mid-write) is the one access we cannot know: skip it.
            if len(parts) != 3:
                continue
            try:
                accesses.append(Access(int(parts[0]), parts[1], datetime.fromisoformat(parts[2])))
            except ValueError:
                continue
        return accesses

    def _rewrite(self, accesses: Iterable[Access]) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(f"{a.seq}\t{a.fact_id}\t{a.at.isoformat()}\n" for a in accesses), "utf-8")
        os.replace(tmp, self.path)

    def append(self, fact_ids: Iterable[str], at: datetime) -> None:
        with self._lock:
            new = []
            for fact_id in fact_ids:
                self._seq += 1
                new.append(Access(self._seq, fact_id, at))
            if not new:
                return
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write("".join(f"{a.seq}\t{a.fact_id}\t{a.at.isoformat()}\n" for a in new))
            self._pending.extend(new)

    def pending(self) -> list[Access]:
        with self._lock:
            return list(self._pending)

    def drop(self, fact_ids: Iterable[str]) -> None:
        """Forget every pending access to these facts (a purge)."""
        gone = set(fact_ids)
        with self._lock:
            self._pending = [a for a in self._pending if a.fact_id not in gone]
            self._rewrite(self._pending)

    def mark_applied(self, upto_seq: int) -> None:
        """Forget lines up to ``upto_seq`` (already committed to the graph)."""
        with self._lock:
            self._pending = [a for a in self._pending if a.seq > upto_seq]
            self._rewrite(self._pending)
