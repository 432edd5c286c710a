"""Quiet, useful logs (issue 25): a new store says once that it was created, not once per schema
migration; an HTTP server says where it serves; the MCP SDK's line per HTTP session is DEBUG."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hippograph.cli import _configure_logging
from hippograph.config import Settings
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.schema import kuzu_migrations
from hippograph.transports import served_url


def test_a_new_graph_store_logs_one_line_not_one_per_migration(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert len(kuzu_migrations()) > 1
    with caplog.at_level(logging.INFO, logger="hippograph.store.migrations"):
        KuzuGraphStore(tmp_path / "graph.kuzu", max_db_size=1 << 32).close()
    lines = [r.getMessage() for r in caplog.records if r.name == "hippograph.store.migrations"]
    assert lines == [
        f"created the graph store {tmp_path / 'graph.kuzu'} (schema version {len(kuzu_migrations())})"
    ]


def test_an_http_server_names_the_url_it_serves() -> None:
    assert served_url(Settings(transport="http", port=8765)) == "http://127.0.0.1:8765/mcp"
    assert served_url(Settings(transport="sse", host="127.0.0.1", port=9000)) == "http://127.0.0.1:9000/sse"


def test_the_sdks_line_per_http_session_is_debug(caplog: pytest.LogCaptureFixture) -> None:
    _configure_logging("INFO")
    sdk = logging.getLogger("mcp.server.streamable_http_manager")
    with caplog.at_level(logging.INFO):
        sdk.info("Created new transport with session ID: 1234")
        sdk.warning("something the operator must see")
    assert [r.getMessage() for r in caplog.records if r.name == sdk.name] == [
        "something the operator must see"
    ]
    with caplog.at_level(logging.DEBUG):
        sdk.info("Created new transport with session ID: 5678")
    assert any(r.levelname == "DEBUG" and "5678" in r.getMessage() for r in caplog.records)
