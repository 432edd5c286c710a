"""The graph index says which graph it follows after a process died without closing."""

from __future__ import annotations

from pathlib import Path

from hippograph.store.graph_index import GraphIndex


def test_a_commit_cut_off_by_a_kill_is_forgotten_once_the_next_open_built_the_index(tmp_path: Path) -> None:
    path = tmp_path / "graph.index"
    index = GraphIndex(path)
    index.begin("token")
    index.trust.mark_pending()  # a graph commit, then the process died before publishing it
    index.close()

    index = GraphIndex(path)
    assert not index.trust.follows("token")  # the next open builds it, then begins
    index.begin("token")
    index.close()  # and dies again, having written nothing

    index = GraphIndex(path)
    try:
        assert index.trust.follows("token")
        assert not index.trust.follows("another graph's token")
    finally:
        index.close()
