"""Brings a Kùzu graph to this hippograph's schema version (kept in Meta), refusing a newer one."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import ladybug

from hippograph.domain.errors import GraphCacheFull, SchemaTooNew, StoreError
from hippograph.store.kuzu_files import one_result
from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.schema import Migration, graph_schema_version, kuzu_migrations

log = logging.getLogger(__name__)

_VERSION_KEY = "schema_version"


def version_mark(path: Path) -> Path:
    """The file beside the graph naming the schema version it holds or is being migrated to."""
    return path.with_name(path.name + ".schema")


def refuse_newer(path: Path) -> None:
    """Raise ``SchemaTooNew`` for a graph a newer hippograph wrote, so that such a data dir is
    never touched: from the version mark when there is one (every hippograph since the mark
    writes it before it migrates), else by opening the graph read-only (~75 ms)."""
    if not path.exists():
        return
    try:
        marked: int | None = int(version_mark(path).read_text(encoding="ascii"))
    except (OSError, ValueError):
        marked = None
    if marked is not None:
        _refuse(path, marked)
        return
    try:
        db = ladybug.Database(str(path), read_only=True)
    except RuntimeError:
        return  # locked by a writer, or unreadable: the read-write open reports it
    try:
        conn = ladybug.Connection(db)
        tables: list[Any] = one_result(conn.execute("CALL show_tables() RETURN name")).get_all()
        if "Meta" in {str(row[0]) for row in tables}:
            result = one_result(conn.execute("MATCH (m:Meta {key: 'schema_version'}) RETURN m.value"))
            rows: list[Any] = result.get_all()
            if rows:
                _refuse(path, int(rows[0][0]))
        conn.close()
    finally:
        db.close()


def _refuse(path: Path, version: int) -> None:
    if version > graph_schema_version():
        raise SchemaTooNew(
            f"{path} holds graph schema version {version}, newer than this hippograph "
            f"understands ({graph_schema_version()}). Upgrade hippograph; nothing was touched."
        )


def mark_version(path: Path) -> None:
    """Name this hippograph's schema version beside the graph, before migrating to it: an older
    hippograph then refuses the graph without opening it, even if the migration is cut short."""
    mark = version_mark(path)
    wanted = str(graph_schema_version())
    try:
        if mark.read_text(encoding="ascii") == wanted:
            return
    except OSError:
        pass
    fresh = mark.with_name(mark.name + ".tmp")
    fresh.write_text(wanted, encoding="ascii")
    fresh.replace(mark)


def schema_version(session: KuzuSession) -> int:
    """The version the graph was last migrated to; 0 for a new, empty graph."""
    if "Meta" not in session.table_names():
        return 0
    value = get_meta(session, _VERSION_KEY)
    if value is None:
        return 0
    if not value.isdigit():
        raise StoreError(
            f"{session.path}: the graph's schema version reads {value[:40]!r}, not a number: its Meta "
            "table is damaged, so the graph is not opened. Restore the data dir from a backup, or "
            "report it with `hippograph doctor` output; nothing was changed."
        )
    return int(value)


def migrate(session: KuzuSession) -> None:
    """Apply each migration newer than the graph, each in a transaction with its version."""
    current = schema_version(session)
    _refuse(session.path, current)  # never mark a newer graph as ours (a mark restored from elsewhere)
    mark_version(session.path)
    # A new graph takes every migration: one line says so, not one per migration.
    level = logging.DEBUG if current == 0 else logging.INFO
    for migration in kuzu_migrations():
        if migration.version <= current:
            continue
        log.log(level, "applying graph schema migration %03d_%s", migration.version, migration.name)
        _apply(session, migration)
    if current == 0:
        log.info("created the graph store %s (schema version %d)", session.path, len(kuzu_migrations()))


def _apply(session: KuzuSession, migration: Migration) -> None:
    """One migration and its version in one transaction. A migration that copies a table (v6)
    needs page cache in proportion to it: when the cache cannot hold it, the transaction has
    made room (the cache doubled for this process, up to a bound) and the migration runs again."""
    while True:
        try:
            with session.transaction():
                for statement in migration.statements:
                    session.execute(statement)
                set_meta(session, _VERSION_KEY, str(migration.version))
            return
        except GraphCacheFull as full:
            if not full.room_made:
                raise


def get_meta(session: KuzuSession, key: str) -> str | None:
    """A value of the Meta table (the schema version, and the service's own keys)."""
    rows = session.run("MATCH (m:Meta {key: $key}) RETURN m.value AS v", {"key": key})
    return rows[0]["v"] if rows else None


def set_meta(session: KuzuSession, key: str, value: str) -> None:
    session.run(
        "MERGE (m:Meta {key: $key}) SET m.value = $value", {"key": key, "value": value}, published=False
    )
