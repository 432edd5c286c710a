"""Each graph table's columns and their Kùzu types, read once: what a batched write casts a
value to, and how a read returns a row's times.

A read returns each time as its text (``CAST(... AS STRING)``, read back exactly by
``rows.naive_time``): ladybug 0.22 leaks the Python object it makes for each TIMESTAMP or DATE
value it returns (40 / 32 B, never given back), ~300 B a fact read, 27 MB a consolidate at 100k
facts. The text costs the engine no more (measured on 10k rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

_TIMES = ("TIMESTAMP", "DATE")

Run = Callable[[str], list[dict[str, Any]]]


class ColumnTypes:
    """Tables' column types, asked of the graph (``CALL table_info``) the first time each is named."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._types: dict[str, dict[str, str]] = {}  # table -> column -> Kùzu type

    def of(self, table: str) -> dict[str, str]:
        """``table``'s columns (its properties, in their order) and their Kùzu types."""
        types = self._types.get(table)
        if types is None:
            # table_info takes no parameters; ``table`` is always one of the store's own names.
            rows = self._run(f"CALL table_info('{table}') RETURN *")
            types = self._types[table] = {row["name"]: row["type"] for row in rows}
        return types

    def cast(self, table: str, column: str) -> str:
        """``CAST(r.column AS type)`` for a row of an UNWIND: Kùzu types a field that is null in
        every row of a batch as STRING, which it will not store in a TIMESTAMP or a list column."""
        return f"CAST(r.{column} AS {self.of(table)[column]})"

    def creating(
        self, table: str, columns: Sequence[str], rows: list[dict[str, Any]]
    ) -> tuple[str, dict[str, Any]]:
        """The statement that creates a ``table`` node per row, with its parameters. One row binds
        each column as a parameter of its own: a fact's 29 columns cast out of an UNWIND row took
        2.2-3.6 ms to create, as parameters 1.0 ms (ladybug 0.22, a 5k-fact graph, 2026-12-01);
        a null parameter is stored as a null of the column's type."""
        if len(rows) == 1:
            return f"CREATE (:{table} {{{', '.join(f'{c}: ${c}' for c in columns)}}})", rows[0]
        fields = ", ".join(f"{c}: {self.cast(table, c)}" for c in columns)
        return f"UNWIND $rows AS r CREATE (:{table} {{{fields}}})", {"rows": rows}

    def returning(self, alias: str, table: str, columns: Sequence[str] | None = None) -> str:
        """``alias.column AS column`` for ``columns`` of ``table`` (default: all), a time as its text."""
        types = self.of(table)
        return ", ".join(
            f"CAST({alias}.{c} AS STRING) AS {c}" if types[c] in _TIMES else f"{alias}.{c} AS {c}"
            for c in (types if columns is None else columns)
        )
