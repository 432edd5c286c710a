"""The files a memory's stores write, on either backend: a test that promises some text never
reaches the disk (a secret) reads every one of them."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from hippograph.config import Settings


def stored_files(settings: Settings, *, log: bool = True) -> list[Path]:
    """Every file the memory of ``settings`` may have written: its data dir's (the model's left
    out) and, on PostgreSQL, its database's own files and (``log``) the server's write-ahead log,
    which keeps what was written until its segments are reused (what a purge cannot reach)."""
    roots = [settings.data_dir]
    if settings.store_url is not None:
        roots += _database_dirs(settings.store_url.get_secret_value())[: None if log else 1]
    return sorted(
        path
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and "models" not in path.relative_to(root).parts
    )


def _database_dirs(url: str) -> list[Path]:
    """A test server's database (its socket lies in its data directory): base/<oid>, pg_wal."""
    import psycopg

    cluster = Path(parse_qs(urlsplit(url).query)["host"][0])
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()
        conn.execute("CHECKPOINT")  # what the server holds in its buffers, on disk
    assert row is not None
    return [cluster / "base" / str(row[0]), cluster / "pg_wal"]


def analyze(settings: Settings) -> None:
    """On PostgreSQL: gather the planner's statistics of the memory's database now (as the
    server's autovacuum does when it likes), so a test sees what they may copy."""
    if settings.store_url is not None:
        import psycopg

        with psycopg.connect(settings.store_url.get_secret_value(), autocommit=True) as conn:
            conn.execute("ANALYZE")
