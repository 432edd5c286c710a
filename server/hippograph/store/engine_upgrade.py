"""The one-time move of a graph file from kuzu 0.11.3's format into ladybug's.

hippograph 0.1 kept its graph with kuzu 0.11.3, the last release of an archived engine; it now
uses ladybug, Kùzu's maintained fork, which cannot read that file. On the first open of such a
file, ``upgrade`` exports it under kuzu in a child process (``kuzu_export``: the two engines cannot
share an interpreter), imports the export under ladybug into a new file beside it, checks that
every table holds as many rows as before, and only then puts the new file in the old one's place
with one atomic rename. A kill at any moment loses nothing: until the rename the old file is
whole (the next open discards the leftovers and starts again); after it, the new one is.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import ladybug

from hippograph.domain.errors import StoreError
from hippograph.store.graph_copy import discard
from hippograph.store.kuzu_files import import_database, one_result

log = logging.getLogger(__name__)

# The first bytes of a database file each engine writes.
_KUZU_MAGIC = b"KUZU"


def written_by_kuzu(path: Path) -> bool:
    """Whether ``path`` is a graph file in kuzu 0.11.3's format (False if there is none)."""
    try:
        with path.open("rb") as file:
            return file.read(len(_KUZU_MAGIC)) == _KUZU_MAGIC
    except FileNotFoundError:
        return False


def upgrade_paths(path: Path) -> tuple[Path, Path]:
    """Where an upgrade exports the old file to, and the new file it imports into."""
    return path.with_name(path.name + ".upgrade-export"), path.with_name(path.name + ".upgrade")


def upgrade(path: Path, *, max_db_size: int, buffer_pool_bytes: int) -> None:
    """Bring the graph file at ``path`` into ladybug's format if kuzu 0.11.3 wrote it."""
    export, fresh = upgrade_paths(path)
    if not written_by_kuzu(path):
        discard(export, fresh)  # a kill after the rename left these
        return
    if "'" in str(export):
        raise StoreError(f"cannot upgrade the graph store: its path {path} holds a quote (')")
    discard(export, fresh)  # an upgrade a kill interrupted
    log.warning(
        "moving the graph store %s from kuzu 0.11.3 to ladybug (once; the old file is kept "
        "until the new one holds everything)",
        path,
    )
    counts = _export(path, export, max_db_size)
    try:
        _import(export, fresh, counts, max_db_size=max_db_size, buffer_pool_bytes=buffer_pool_bytes)
    except BaseException:
        discard(export, fresh)
        raise
    # The export checkpointed the old file: its log, if kuzu left one, holds nothing more.
    Path(f"{path}.wal").unlink(missing_ok=True)
    os.replace(fresh, path)
    discard(export)
    log.warning("the graph store %s now uses ladybug", path)


def _export(path: Path, export: Path, max_db_size: int) -> dict[str, tuple[str, int]]:
    """Export ``path`` under kuzu in a child process; each table's kind and row count."""
    child = subprocess.run(
        [sys.executable, "-m", "hippograph.store.kuzu_export", str(path), str(export), str(max_db_size)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    if child.returncode != 0:
        discard(export)
        reason = child.stderr.strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        raise StoreError(
            f"cannot upgrade the graph store {path} from kuzu 0.11.3: exporting it failed ({reason[0]}). "
            "Nothing was changed; the file is as it was. Is kuzu 0.11.3 installed "
            "(pip install kuzu==0.11.3)?"
        )
    counts = json.loads(child.stdout.strip().splitlines()[-1])
    return {str(name): (str(kind), int(rows)) for name, (kind, rows) in counts.items()}


def _import(
    export: Path, fresh: Path, counts: dict[str, tuple[str, int]], *, max_db_size: int, buffer_pool_bytes: int
) -> None:
    """Import ``export`` under ladybug into the new file ``fresh``, checked and checkpointed."""

    def same_rows(conn: ladybug.Connection) -> None:
        for table, (kind, expected) in counts.items():
            pattern = f"MATCH (n:{table})" if kind == "NODE" else f"MATCH ()-[n:{table}]->()"
            (found,) = (
                one_result(conn.execute(f"{pattern} RETURN count(*) AS n")).get_as_arrow()["n"].to_pylist()
            )
            if found != expected:
                raise StoreError(
                    f"cannot upgrade the graph store: the new file holds {found} rows of {table}, the "
                    f"old one {expected}. Nothing was changed; please report this."
                )

    db = ladybug.Database(str(fresh), max_db_size=max_db_size, buffer_pool_size=buffer_pool_bytes)
    import_database(export, db, same_rows)
    Path(f"{fresh}.wal").unlink(missing_ok=True)  # checkpointed: it holds nothing
