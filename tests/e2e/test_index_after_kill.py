"""A process killed without closing (a stdio client kills its server 2-4 s after closing stdin)
leaves a graph index that holds every commit: the next open keeps it instead of building it
again from the graph (~95 s at 1M facts), unless a commit was cut off between the two."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.kuzu_session import KuzuSession

pytestmark = pytest.mark.embedded  # the embedded graph's own index

# Remembers two facts and dies without closing; "cut" dies inside the second commit, after the
# graph committed it and before the index was handed its changes.
_KILLED = """
import os, sys
from pathlib import Path
from hippograph.config import Settings
from hippograph.service.memory import Memory
memory = Memory.open(Settings(data_dir=Path(sys.argv[1]), models_dir=Path(sys.argv[2])))
memory.remember("Ines's favourite tea is genmaicha.", subject="Ines", predicate="tea", object="genmaicha")
if sys.argv[3] == "cut":
    memory.graph._session._publish = lambda hooks: os._exit(0)
memory.remember("Tomasz keeps his climbing gear in the garage loft.", entities=["Tomasz"])
os._exit(0)
"""

_KEPT = "the graph index holds every commit"


def _killed(settings: Settings, how: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _KILLED, str(settings.data_dir), str(settings.models_dir), how],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("how", ["after", "cut"])
def test_an_index_a_killed_process_left_is_kept_only_when_it_holds_every_commit(
    settings: Settings, embedder: FastEmbedder, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    memory = Memory.open(settings, embedder=embedder)
    memory.remember("The team standup moved to 10 am.", tags=["standup"])
    memory.close()  # a clean close first: the index matched by token
    _killed(settings, how)

    with caplog.at_level(logging.INFO, logger="hippograph.store.index_build"):
        memory = Memory.open(settings, embedder=embedder)
    try:
        assert any(_KEPT in r.getMessage() for r in caplog.records) == (how == "after")
        assert memory.graph.check_mirror(repair=False) == []  # as a build from the graph
        assert memory.graph.fact_count() == 3
        found = memory.search("Where does Tomasz keep his climbing gear?", limit=3).results
        assert found and "garage loft" in found[0].content
    finally:
        memory.close()


def test_an_index_is_built_again_after_a_kill_when_the_graph_was_replaced(
    settings: Settings, embedder: FastEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A graph file put back from a copy (a restore) is not the graph the index followed."""
    memory = Memory.open(settings, embedder=embedder)
    memory.remember("The team standup moved to 10 am.")
    memory.close()
    other = Memory.open(settings.model_copy(update={"data_dir": tmp_path / "other"}), embedder=embedder)
    other.remember("The lease on the Lisbon office ends in June.")
    other.close()
    _killed(settings, "after")
    graph = settings.graph_file
    graph.write_bytes((tmp_path / "other" / graph.name).read_bytes())  # a clean close's file,
    Path(f"{graph}.wal").unlink(missing_ok=True)  # which has no log beside it

    with caplog.at_level(logging.INFO, logger="hippograph.store.index_build"):
        memory = Memory.open(settings, embedder=embedder)
    try:
        assert not any(_KEPT in r.getMessage() for r in caplog.records)
        assert memory.graph.check_mirror(repair=False) == []
        assert [r.content for r in memory.search("Lisbon office lease", limit=1).results] == [
            "The lease on the Lisbon office ends in June."
        ]
    finally:
        memory.close()


_WROTE_AND_DIED = """
import os, sys
import ladybug
db = ladybug.Database(sys.argv[1], buffer_pool_size=64 << 20)
conn = ladybug.Connection(db)
conn.execute("CREATE NODE TABLE T(id STRING PRIMARY KEY, v STRING)")
conn.execute("UNWIND range(1, 20000) AS i CREATE (:T {id: CAST(i AS STRING), v: 'v' + CAST(i AS STRING)})")
os._exit(0)
"""


def test_the_log_a_killed_process_left_is_written_into_the_file_at_open(tmp_path: Path) -> None:
    """ladybug replays it into the page cache at open and keeps it there unwritten: at 1M facts
    the index build's reads then failed for want of cache."""
    path = tmp_path / "graph.lbug"
    done = subprocess.run([sys.executable, "-c", _WROTE_AND_DIED, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    wal = Path(f"{path}.wal")
    assert wal.stat().st_size > 1 << 20

    session = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=32 << 20)
    try:
        assert not wal.exists() or wal.stat().st_size == 0
        assert session.run("MATCH (t:T) RETURN count(*) AS n") == [{"n": 20000}]
    finally:
        session.close()
