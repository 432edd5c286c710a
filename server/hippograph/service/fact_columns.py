"""What consolidate knows of each fact of a scope, held as numpy columns, and the edges it implies.

Row ``i`` is the fact ``ids[i]``. Per fact: when it happened, its session and when it was
stored (``store.fact_times``), the entities it is about. Held as arrays, not as Python strings,
tuples and lists a fact: at 100k facts those took ~50 MB of small objects, and Python gives its
1 MiB arenas back only when nothing in them lives on; a few objects that outlive the pass (a
statement cached, an entry in a cache) kept ~70 MB of them after each consolidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC

import numpy as np

from hippograph.service.shaping import iso
from hippograph.store.seam import UNKNOWN, FactTimes, moment

Rows = Sequence[int] | np.ndarray  # facts by row number


class FactColumns:
    """Columns over the facts ``ids`` (their ``times`` read for them), and the entities they are
    about, added a few facts at a time (``add_about``)."""

    def __init__(self, ids: Sequence[str], times: FactTimes) -> None:
        self.ids = ids
        self.times = times.time  # microseconds since 1970, UTC
        self._stored = times.stored
        self._session = times.session
        named = np.asarray(ids, dtype=str)
        order = np.argsort(named)
        self._sorted_ids = named[order]
        self._order = order.astype(np.int32)
        self._entities: dict[str, int] = {}  # entity id -> code, in order of first mention
        self._about_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (row, entity code)
        self._about: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # indptr, codes, entity ids

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """The rows of ``ids`` (int32), -1 for an id not among the facts."""
        wanted = np.asarray(ids, dtype=str)
        if not len(self._sorted_ids) or not len(wanted):
            return np.full(len(wanted), -1, dtype=np.int32)
        at = np.minimum(np.searchsorted(self._sorted_ids, wanted), len(self._sorted_ids) - 1)
        return np.where(self._sorted_ids[at] == wanted, self._order[at], -1).astype(np.int32)

    def add_about(self, rows: Sequence[int], entity_ids: Sequence[str]) -> None:
        """Facts (rows) about entities, one pair at a time."""
        codes = [self._entities.setdefault(eid, len(self._entities)) for eid in entity_ids]
        if codes:
            self._about_parts.append((np.asarray(rows, dtype=np.int32), np.asarray(codes, dtype=np.int32)))

    def session_turns(self) -> tuple[np.ndarray, np.ndarray]:
        """Each fact said in a session and the one said next in it (rows)."""
        row = np.flatnonzero(self._session >= 0).astype(np.int32)
        code, stored = self._session[row], self._stored[row]
        order = np.lexsort((row, stored, code))
        code, row = code[order], row[order]
        same = code[1:] == code[:-1]
        return row[:-1][same], row[1:][same]

    def shared_entities(self, typical: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Facts (rows) that name the same entity, each to the next in time, weighed by how uncommon
        the entity is (an entity every fact names, as a conversation's speaker, says nothing)."""
        indptr, codes, _ = self._about_index()
        rows = np.repeat(np.arange(len(self.ids), dtype=np.int64), np.diff(indptr))
        order = np.lexsort((rows, self.times[rows], codes))
        code, row = codes[order], rows[order]
        same = code[1:] == code[:-1]
        total = max(len(self.ids), 2)
        named_by = np.bincount(code, minlength=1)
        weight = typical * np.log(total / np.maximum(named_by[code[1:]], 1)) / np.log(total)
        return row[:-1][same], row[1:][same], weight[same]

    def named_in(self, rows: Rows) -> Counter[str]:
        """How many of the facts ``rows`` name each entity (by id)."""
        indptr, codes, entity_ids = self._about_index()
        picked = np.asarray(rows, dtype=np.int64)
        if not len(picked) or not len(codes):
            return Counter()
        starts, ends = indptr[picked], indptr[picked + 1]
        taken = np.concatenate([codes[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)])
        found, counts = np.unique(taken, return_counts=True)
        return Counter(
            {str(entity_ids[c]): int(n) for c, n in zip(found.tolist(), counts.tolist(), strict=True)}
        )

    def span(self, rows: Rows) -> tuple[str, str]:
        """When the first and the last of the facts ``rows`` happened ("" where unknown)."""
        times = self.times[np.asarray(rows, dtype=np.int64)]
        return _iso(int(times.min())), _iso(int(times.max()))

    def _about_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, codes, entity ids): the entities of row ``r`` are ``codes[indptr[r]:indptr[r+1]]``,
        each once; code ``c`` is entity ``entity_ids[c]``."""
        if self._about is None:
            if self._about_parts:
                row, code = (np.concatenate(part) for part in zip(*self._about_parts, strict=True))
            else:
                row, code = np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
            width = max(len(self._entities), 1)
            pair = np.unique(row.astype(np.int64) * width + code)  # each (row, entity) once, by row
            rows, codes = pair // width, (pair % width).astype(np.int32)
            indptr = np.searchsorted(rows, np.arange(len(self.ids) + 1)).astype(np.int64)
            entity_ids = np.asarray(list(self._entities), dtype=str)
            self._about, self._about_parts = (indptr, codes, entity_ids), []
        return self._about


def _iso(micros: int) -> str:
    """A time in microseconds since 1970 as ISO 8601 text (``shaping.iso``), "" where unknown."""
    return "" if micros == UNKNOWN else iso(moment(micros).replace(tzinfo=UTC)) or ""
