"""Cypher the graph session builds or reads: batched writes (``KuzuSession.for_each``), and the
columns a statement SETs (what it leaves in memory until a checkpoint, ``KuzuSession._settle``).

Pure: text in, text out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# A node to find first: (pattern, key property, row field), e.g. ("a:Fact", "id", "src").
End = tuple[str, str, str]
Cast = Callable[[str, str], str]  # (table, column) -> the row value as the column's type

_ASSIGNED = re.compile(r"(?<![<>!=])=(?!=)")  # `e.n = 1`, not `<=` or `==`


def keyed(ends: Sequence[End], table: str, columns: Sequence[str], clause: str, cast: Cast) -> str:
    """``clause`` for one row, its ends found by primary key from ``$end<i>`` and its ``columns``
    bound as ``v_<column>`` from ``$rows`` (one row)."""
    matches = " ".join(f"MATCH ({pattern} {{{key}: $end{i}}})" for i, (pattern, key, _) in enumerate(ends))
    if not columns:
        return f"{matches} {clause}"
    found = [pattern.split(":")[0] for pattern, _, _ in ends]
    values = [*found, *(f"{cast(table, column)} AS v_{column}" for column in columns)]
    return f"{matches} UNWIND $rows AS r WITH {', '.join(values)} {clause}"


def keyed_params(row: Mapping[str, Any], ends: Sequence[End], columns: Sequence[str]) -> dict[str, Any]:
    """The parameters of ``keyed``'s statement for ``row``."""
    params: dict[str, Any] = {f"end{i}": row[field] for i, (_, _, field) in enumerate(ends)}
    if columns:
        params["rows"] = [{c: row[c] for c in columns}]
    return params


def unwound(ends: Sequence[End], table: str, columns: Sequence[str], clause: str, cast: Cast) -> str:
    """``clause`` for every row of ``$rows``, each end found in a MATCH of its own by a plain
    variable (else kuzu 0.11.3 planned a cross product: 256 edges took 10 s at 100k)."""
    fields = [*(field for _, _, field in ends), *columns]
    values = [f"r.{field} AS v_{field}" for _, _, field in ends]
    values += [f"{cast(table, column)} AS v_{column}" for column in columns]
    query = f"UNWIND $rows AS r WITH {', '.join(values)}"
    for i, (pattern, key, field) in enumerate(ends):
        if i:
            found = [end.split(":")[0] for end, _, _ in ends[:i]]
            query += f" WITH {', '.join([*found, *(f'v_{f}' for f in fields[i:])])}"
        query += f" MATCH ({pattern} {{{key}: v_{field}}})"
    return f"{query} {clause}"


@functools.lru_cache(maxsize=1024)
def columns_set(query: str) -> int:
    """How many column values ``query`` assigns after its (last) SET: 0 without one."""
    _, found, assignments = query.rpartition(" SET ")
    return len(_ASSIGNED.findall(assignments)) if found else 0
