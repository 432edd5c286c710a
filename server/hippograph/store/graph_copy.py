"""Copy every table of a graph into a new, empty graph in slices, so the copy fits any page cache.

A rebuild (the compaction at close, and the end of every purge) used ``EXPORT DATABASE`` and
``IMPORT DATABASE``. ladybug 0.22 builds each exported Parquet file whole in its buffer pool, and
imports a file in one transaction: with the default 128 MiB pool, the export of 100k facts (a
20k-fact table with a 32 MiB pool) failed with "the buffer pool is full", so a store past that
size could no longer be compacted, nor purged (issue 22).

Here each table is written in slices of at most ``rows`` nodes or relationships (chosen by
their offsets in the table), each slice to a Parquet file of its own; the new graph takes the
slices one at a time and is checkpointed after each, so the pool holds one slice and the node
group it lands in, never a table. Measured on synthetic facts of ~170 bytes: 100k facts and
200k ABOUT edges copy in ~8 s, 1M and 2M in ~3 min, both with a 128 MiB pool.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import ladybug

from hippograph.domain.errors import StoreError
from hippograph.store.graph_values import offset_slices
from hippograph.store.schema import kuzu_migrations

log = logging.getLogger(__name__)

# Pool bytes per row of a slice: a 32 MiB pool took 4,096 facts a slice, not 8,192 (and the
# default 128 MiB, 16k). Rows far longer than a usual fact fill the pool sooner: then the copy
# starts again with slices half as long, down to _FEWEST_ROWS.
_POOL_BYTES_PER_ROW = 8192
_FEWEST_ROWS = 64
# Tables of at most this many rows are compared row by row after a copy (Meta, entities, tags).
_SMALL = 4096
# What ladybug says when its buffer pool cannot give a statement a page.
POOL_FULL = "buffer pool is full"


# The files ladybug keeps beside a database: its log, and what a checkpoint writes while it runs
# (left behind when the process dies in one; the next open finishes the checkpoint from them).
SIDE_FILES = (".wal", ".shadow", ".wal.checkpoint", ".checkpoint.apply.lock", ".checkpoint.intent.lock")


def side_files(path: Path) -> list[Path]:
    """Where ladybug keeps its files beside the database ``path``."""
    return [Path(f"{path}{side}") for side in SIDE_FILES]


def discard(*paths: Path) -> None:
    """Remove these database files and the files ladybug keeps beside them, or export
    directories. A rebuild killed in a checkpoint of its new file left ``<new>.wal.checkpoint``;
    kept, the next rebuild's new file would not open ("Database ID for temporary file ... does
    not match the current database"), and no rebuild would succeed again."""
    for path in paths:
        for found in (path, *side_files(path)):
            if found.is_dir():
                shutil.rmtree(found)
            elif found.exists():
                found.unlink()


def copy_graph(
    conn: ladybug.Connection,
    export: Path,
    fresh: Path,
    open_db: Callable[[Path], ladybug.Database],
    pool_bytes: int,
) -> dict[str, list[list[Any]]]:
    """Copy the graph of ``conn`` into the new file ``fresh`` (closed and checkpointed when this
    returns), through slices in the directory ``export`` (removed); the rows of its tables of at
    most ``_SMALL`` rows, as they read in both (``table_rows``). On failure neither is left."""
    rows = max(_FEWEST_ROWS, pool_bytes // _POOL_BYTES_PER_ROW)
    like = tables(conn)
    while True:
        discard(export, fresh)
        try:
            counts = export_slices(conn, export, rows)
            few = [table for table in like if counts[table.name] <= _SMALL]
            small = table_rows(conn, few)
            db = open_db(fresh)
            try:
                fresh_conn = ladybug.Connection(db)
                import_slices(fresh_conn, export, like, counts)
                if table_rows(fresh_conn, few) != small:
                    raise StoreError(
                        "the rebuilt graph's small tables (Meta, the entities, the tags) read back "
                        "otherwise than the graph's; it was not swapped in"
                    )
                fresh_conn.execute("CHECKPOINT")
                fresh_conn.close()
            finally:
                db.close()
        except RuntimeError as err:
            discard(export, fresh)
            if POOL_FULL not in str(err) or rows <= _FEWEST_ROWS:
                raise
            rows //= 2
            log.info("rebuilding the graph: its rows are long, trying slices of %d rows", rows)
            continue
        except BaseException:
            discard(export, fresh)
            raise
        discard(export)
        return small


class Table(NamedTuple):
    name: str
    columns: tuple[str, ...]  # the properties, in the table's order (a slice's file keeps it)
    types: tuple[str, ...]
    # A relationship table's (source table, its key, target table, its key); None for nodes.
    ends: tuple[str, str, str, str] | None


def table_rows(conn: ladybug.Connection, few: Sequence[Table]) -> dict[str, list[list[Any]]]:
    """Every row of each of ``few`` (small tables), sorted: compared whole after a copy. (At 1M
    facts a rebuilt graph's Meta once read back shifted by a character: '7f' for '7'.)"""
    found = {}
    for table in few:
        match, values = _pattern(table)
        found[table.name] = sorted(_rows(conn, f"{match} RETURN {', '.join(values)}"), key=repr)
    return found


def _rows(conn: ladybug.Connection, query: str) -> list[list[Any]]:
    result = conn.execute(query)
    if isinstance(result, list):  # one statement was sent: never
        raise StoreError(f"one statement was expected: {query}")
    rows = [list(row.values()) if isinstance(row, dict) else row for row in result.get_all()]
    result.close()
    return rows


def tables(conn: ladybug.Connection) -> list[Table]:
    """The graph's tables, node tables first (a relationship's ends must exist before it)."""
    found = []
    for name, kind in _rows(conn, "CALL show_tables() RETURN name, type"):
        if kind not in ("NODE", "REL"):
            continue
        info = _rows(conn, f"CALL table_info('{name}') RETURN name, type")
        ends = None
        if kind == "REL":
            (src, dst, src_key, dst_key), *more = _rows(conn, f"CALL show_connection('{name}') RETURN *")
            if more:
                raise StoreError(
                    f"the graph's table {name} joins several pairs of tables: it cannot be copied"
                )
            ends = (str(src), str(src_key), str(dst), str(dst_key))
        found.append(Table(str(name), tuple(str(c) for c, _ in info), tuple(str(t) for _, t in info), ends))
    return sorted(found, key=lambda t: (t.ends is not None, t.name))


def _pattern(table: Table) -> tuple[str, list[str]]:
    """A MATCH of the table's rows as ``x``, and what a slice's file holds of each: a node's
    properties; a relationship's two ends' keys, then its properties."""
    if table.ends is None:
        return f"MATCH (x:{table.name})", [f"x.{c}" for c in table.columns]
    src, src_key, dst, dst_key = table.ends
    values = [f"a.{src_key}", f"b.{dst_key}", *(f"x.{c}" for c in table.columns)]
    return f"MATCH (a:{src})-[x:{table.name}]->(b:{dst})", values


def export_slices(conn: ladybug.Connection, out: Path, rows: int) -> dict[str, int]:
    """Write every table into ``out`` (a new directory) as Parquet slices of at most ``rows``
    rows; each table's row count."""
    out.mkdir()
    counts = {}
    for table in tables(conn):
        match, values = _pattern(table)
        ((count, last),) = _rows(conn, f"{match} RETURN count(*), max(offset(id(x)))")
        counts[table.name] = int(count)
        if not count:
            continue
        for start, where in offset_slices(last, rows):
            target = out / f"{table.name}.{start:012d}.parquet"
            conn.execute(f"COPY ({match} WHERE {where} RETURN {', '.join(values)}) TO '{target}'")
    return counts


def import_slices(conn: ladybug.Connection, out: Path, like: list[Table], counts: dict[str, int]) -> None:
    """Create the schema in the new, empty graph of ``conn``, take in every slice ``export_slices``
    wrote, and check that each table is as it was: the same columns (``like``) and rows
    (``counts``). Raises StoreError when they differ."""
    for migration in kuzu_migrations():
        for statement in migration.statements:
            conn.execute(statement)
    conn.execute("MATCH (m:Meta) DELETE m")  # the old graph's rows (its schema version) follow
    made = tables(conn)
    if made != like:
        raise StoreError(
            "the graph's tables differ from the ones its schema version makes; it was not rebuilt"
        )
    for table in made:
        for piece in sorted(out.glob(f"{table.name}.*.parquet")):
            conn.execute(f"COPY {table.name} FROM '{piece}'")
            conn.execute("CHECKPOINT")
        match, _ = _pattern(table)
        ((count,),) = _rows(conn, f"{match} RETURN count(*)")
        if count != counts[table.name]:
            raise StoreError(
                f"the rebuilt graph's {table.name} holds {count} rows, not {counts[table.name]}; "
                "it was not swapped in"
            )
