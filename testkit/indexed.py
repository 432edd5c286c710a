"""What a memory's vector index holds as each row's text, on either engine (the text a search
matches is part of what a write promises, so tests read it back)."""

from __future__ import annotations

from hippograph.store.seam import VectorStore


def indexed_texts(vectors: VectorStore, table: str = "facts") -> dict[str, str]:
    """id -> the text indexed for that row of ``table``."""
    vectors.flush()
    from hippograph.store.vectors import LanceVectorStore

    if isinstance(vectors, LanceVectorStore):
        rows = vectors._tables[table].search().select(["id", "text"]).limit(None).to_arrow()
        return dict(zip(rows.column("id").to_pylist(), rows.column("text").to_pylist(), strict=True))
    from hippograph.store.pg_vectors import _TABLES, PgVectorStore

    assert isinstance(vectors, PgVectorStore), type(vectors)
    with vectors._db.transaction() as conn:
        found = conn.execute(f"SELECT id, text FROM {_TABLES[table]}").fetchall()
    return {str(row_id): str(text) for row_id, text in found}
