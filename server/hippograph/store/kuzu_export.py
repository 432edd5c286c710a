"""Export a graph file that kuzu 0.11.3 wrote, for ladybug to import: run as a process of its own.

``python -m hippograph.store.kuzu_export GRAPH_FILE EXPORT_DIR MAX_DB_SIZE`` replays the file's
log, checkpoints it (so the file alone is whole), exports every table as Parquet into
``EXPORT_DIR`` and prints each node and relationship table's kind and row count as JSON. kuzu and ladybug
crash one interpreter when both are imported, so ``engine_upgrade`` runs this module in a child
process; it imports nothing else of hippograph.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import kuzu


def export(graph: str, out: str, max_db_size: int) -> dict[str, tuple[str, int]]:
    """Export ``graph`` into the directory ``out`` (which must not exist); each node and
    relationship table's kind (NODE or REL) and row count."""
    db = kuzu.Database(graph, max_db_size=max_db_size)
    conn = kuzu.Connection(db)
    try:
        conn.execute("CHECKPOINT")
        counts = {}
        for name, kind in _rows(conn, "CALL show_tables() RETURN name, type"):
            pattern = {"NODE": f"MATCH (n:{name})", "REL": f"MATCH ()-[n:{name}]->()"}.get(kind)
            if pattern is not None:
                counts[str(name)] = (str(kind), int(_rows(conn, f"{pattern} RETURN count(*)")[0][0]))
        conn.execute(f"EXPORT DATABASE '{out}' (format='parquet')")
    finally:
        conn.close()
        db.close()
    return counts


def _rows(conn: kuzu.Connection, query: str) -> list[list[Any]]:
    result = conn.execute(query)
    assert not isinstance(result, list)  # one statement, one result
    return [list(row.values()) if isinstance(row, dict) else row for row in result.get_all()]


if __name__ == "__main__":
    print(json.dumps(export(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
