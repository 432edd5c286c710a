"""LanceDB: a connection with bounded caches, and the tables as graph_schema/lance describes them.

A table records the schema version, embedding model and dimension it was built for; one built
for another is dropped and created empty (the vector store re-indexes it from the graph), or,
for the same model under an older layout, carried over and cast.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

from hippograph.domain.errors import IndexDamaged
from hippograph.store.cache_budget import DEFAULT_SHARES, CacheBudget
from hippograph.store.schema import lance_table_spec

log = logging.getLogger(__name__)


# LanceDB's REST namespace client (OpenAPI-generated), entered lazily: see _import_lancedb.
_NAMESPACE_CLIENT = "lance_namespace_urllib3_client"
_IMPORTING = threading.Lock()
_META_KEY = b"hippograph"
_ARROW_TYPES = {
    "string": pa.string(),
    "string_list": pa.list_(pa.string()),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
# Vectors are unit length: half precision keeps ~3 significant digits of each component, and
# halves the table (768 of ~1,700 bytes a fact at 384 dimensions).
_VECTOR_ELEMENTS = {"float32": pa.float32(), "float16": pa.float16()}
# Scalar indexes named in graph_schema/lance/*.json ("index" on a field). Without them a
# filtered query scans the filter columns: at 100k facts the status/scope prefilter cost
# 8-10 ms of a 20 ms vector query; with bitmaps it costs ~2 ms. Built in well under 1 s.
_SCALAR_INDEXES = {"btree": "BTree", "bitmap": "Bitmap", "label_list": "LabelList"}  # in lancedb.index


def connect(path: Path, cache: CacheBudget = DEFAULT_SHARES) -> Any:
    """A LanceDB connection to the directory ``path``, with bounded caches.

    LanceDB's defaults (1 GiB of metadata, 6 GiB of index pages) let a server grow with every
    write: each version's manifest and fragment list stays cached, ~23 KB a remember (46 MB after
    2,000 remembers, RSS with it); reads use the newest version only. Index pages (IVF
    partitions, full-text and scalar indexes) beyond ``cache.vector_index`` are read from disk.
    """
    lancedb = _import_lancedb()

    # Lance's index statistics leave out the IVF centroids (its announced future default): a
    # server's log then lacks the warning Lance prints to stderr on every first ANN index use.
    os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    session = lancedb.Session(
        index_cache_size_bytes=cache.vector_index, metadata_cache_size_bytes=cache.vector_metadata
    )
    return lancedb.connect(str(path), session=session)


def given_table(given: Mapping[str, Any]) -> Any:
    """In a worker process (``store.worker_process``): the table named ``given["table"]`` of the
    LanceDB directory ``given["path"]``."""
    return connect(Path(str(given["path"]))).open_table(str(given["table"]))


def _import_lancedb() -> Any:
    """``import lancedb``, without running its REST namespace client's package ``__init__``.

    Imported here, not with this module: a server imports this module before it answers MCP
    initialize but opens the stores in the background, and the stores' open is what a cold
    start's first call waits for. ``import lancedb`` took ~1.7 s, half of it in the API classes
    of ``lance_namespace_urllib3_client`` (each method wrapped by pydantic's ``validate_call`` at
    import), which its package ``__init__`` imports eagerly although only the REST namespace
    (never used here) calls them: ~0.8 s without them. The package is entered without its
    ``__init__``: its submodules (the models lancedb imports) load as usual, and the first use of
    a name the ``__init__`` defines runs it then.
    """
    with _IMPORTING:
        spec = None if _NAMESPACE_CLIENT in sys.modules else importlib.util.find_spec(_NAMESPACE_CLIENT)
        if spec is not None and spec.loader is not None and spec.submodule_search_locations is not None:
            package = importlib.util.module_from_spec(spec)
            loader = spec.loader

            def load_on_first_use(name: str) -> Any:
                delattr(package, "__getattr__")  # set below
                loader.exec_module(package)
                return getattr(package, name)

            setattr(package, "__getattr__", load_on_first_use)  # noqa: B010 (a module attribute)
            sys.modules[_NAMESPACE_CLIENT] = package
        import lancedb

    return lancedb


def _arrow_schema(table: str, dim: int, model: str) -> pa.Schema:
    spec = lance_table_spec(table)
    fields = []
    for field in spec["fields"]:
        if field["type"] == "vector":
            kind = pa.list_(_VECTOR_ELEMENTS[field.get("element", "float32")], dim)
        else:
            kind = _ARROW_TYPES[field["type"]]
        fields.append(pa.field(field["name"], kind, nullable=field["nullable"]))
    meta = {"version": spec["version"], "model": model, "dim": dim}
    return pa.schema(fields, metadata={_META_KEY: json.dumps(meta).encode()})


def open_table(db: Any, name: str, *, dim: int, model: str) -> tuple[Any, bool]:
    """The table, with every index it should have, and whether it was rebuilt (left empty).

    A table whose files were removed or cut short still opens (its manifest is whole) and
    then fails every read: it is found here, by reading its ids and using each index, and
    rebuilt empty, for the caller to fill from the graph.
    """
    table, rebuilt = _open(db, name, dim, model)
    try:
        _ensure_indexes(name, table)
        problem = damage(table, full=False)
    except Exception as err:  # an index that cannot be listed or built: as damaged
        problem = _first_line(err)
    if problem is not None:
        log.warning("LanceDB table %r is damaged (%s): rebuilding it from the graph", name, problem)
        return recreate_table(db, name, dim=dim, model=model), True
    return table, rebuilt


def damage(table: Any, *, full: bool) -> str | None:
    """What fails when the table is read, or None. ``full`` reads every column of every row
    (~0.3 s per 100k facts); otherwise the ids, and one query through each index."""
    try:
        if full:
            table.to_arrow()
        else:
            table.search().select(["id"]).limit(None).to_arrow()
        table.search("probe", query_type="fts").select(["id", "_score"]).limit(1).to_list()
        table.search().where("id = 'probe'").select(["id"]).limit(1).to_list()
    except Exception as err:  # LanceDB raises RuntimeError, OSError or ValueError for bad files
        return _first_line(err)
    return None


R = TypeVar("R")


def readable(read: Callable[..., R]) -> Callable[..., R]:
    """A read of a table whose files are damaged raises IndexDamaged, saying what to do."""

    @functools.wraps(read)
    def guarded(self: Any, table: str, *args: Any, **kwargs: Any) -> R:
        try:
            return read(self, table, *args, **kwargs)
        except (RuntimeError, OSError) as err:
            if "lance" not in str(err).casefold():
                raise
            raise IndexDamaged(
                f"the {table} index under {self.path} cannot be read ({_first_line(err)}): it is being "
                "rebuilt from the graph, which holds every fact: try again shortly, or run hippograph doctor"
            ) from err

    return guarded


def queried(read: Callable[..., R]) -> Callable[..., R]:
    """A query of a table: ``readable``, and refused with IndexDamaged while the table, rebuilt
    while serving, is refilled from the graph (``self.refilling``): a partial answer would look whole."""
    guarded = readable(read)

    @functools.wraps(read)
    def whole(self: Any, table: str, *args: Any, **kwargs: Any) -> R:
        if table in self.refilling:
            raise IndexDamaged(
                f"the {table} index under {self.path} is being rebuilt from the graph, which holds "
                "every fact: try again shortly, or run hippograph doctor"
            )
        return guarded(self, table, *args, **kwargs)

    return whole


def recreate_table(db: Any, name: str, *, dim: int, model: str) -> Any:
    """Drop the table (if any of it is left) and create it empty, with its indexes."""
    db.drop_table(name, ignore_missing=True)
    table = db.create_table(name, schema=_arrow_schema(name, dim, model))
    _ensure_indexes(name, table)
    return table


def _first_line(err: BaseException) -> str:
    return (str(err).splitlines() or [type(err).__name__])[0][:200]


def _open(db: Any, name: str, dim: int, model: str) -> tuple[Any, bool]:
    schema = _arrow_schema(name, dim, model)
    rebuilt = False
    rows = None
    if name in db.list_tables().tables:
        try:
            table = db.open_table(name)
        except Exception as err:
            # A process killed while creating the table leaves a directory without a
            # committed version (seen when a client killed a server mid-open).
            log.warning("LanceDB table %r cannot be opened (%s): rebuilding it", name, err)
            rebuilt = True
        else:
            found = json.loads((table.schema.metadata or {}).get(_META_KEY, b"{}"))
            wanted = json.loads(schema.metadata[_META_KEY])
            if found == wanted:
                return table, False
            if (found.get("model"), found.get("dim")) == (model, dim):
                # Same model, older layout: carry the rows over, cast, instead of re-embedding.
                log.warning("LanceDB table %r: converting to schema version %s", name, wanted["version"])
                rows = table.to_arrow().select(schema.names).cast(schema)
            else:
                log.warning("LanceDB table %r was built for another schema or model: rebuilding it", name)
                rebuilt = True
        # If the process dies before the new table is written, the next open finds none and
        # re-indexes from the graph.
        db.drop_table(name)
    return db.create_table(name, data=rows, schema=schema), rebuilt


def rewrite_table(db: Any, name: str, table: Any) -> Any:
    """The table written afresh from its current rows, every older version's files removed.

    A delete in Lance only marks rows deleted (the data files keep them until a compaction that
    a single deleted row does not trigger); overwriting the table and cleaning up every other
    version removes them from disk. The indexes are built again (the vector index by the
    caller, which knows when one is worth it).
    """
    rows = table.to_arrow()
    fresh = db.create_table(name, data=rows, schema=table.schema, mode="overwrite")
    _ensure_indexes(name, fresh)
    with warnings.catch_warnings():
        # "removes every version except the latest": what a purge wants; the caller holds the
        # write lock, and only this process opens the data dir.
        warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)", category=UserWarning)
        fresh.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
    return fresh


def _ensure_indexes(name: str, table: Any) -> None:
    """Create the indexes the table lacks: full text on ``text``, and the scalar indexes the
    schema asks for (older stores, or a process killed between creating a table and these)."""
    import lancedb.index

    have = {column for index in table.list_indices() for column in index.columns}
    if "text" not in have:
        table.create_index("text", config=lancedb.index.FTS())
    for field in lance_table_spec(name)["fields"]:
        kind = field.get("index")
        if kind and field["name"] not in have:
            table.create_index(field["name"], config=getattr(lancedb.index, _SCALAR_INDEXES[kind])())
