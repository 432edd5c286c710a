"""A graph log too big for the engine's page cache, left unreplayed by a process that died (a
child ``python -c`` here), is replayed with a larger pool, or refused saying which setting opens
it (issue 22).

(Hundreds of writes in the smallest pool, in process: tests/test_graph_cache.py.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hippograph.domain.errors import StoreError
from hippograph.store.kuzu_session import KuzuSession
from tests.test_graph_cache import _POOL

_UNCHECKPOINTED = """
import os, sys, ladybug as kuzu
db = kuzu.Database(sys.argv[1], buffer_pool_size=256 << 20, auto_checkpoint=False)
conn = kuzu.Connection(db)
conn.execute("CREATE NODE TABLE Hub(id STRING, n INT64, PRIMARY KEY(id))")
conn.execute("CREATE (:Hub {id: 'h', n: 0})")
for _ in range(int(sys.argv[2])):
    conn.execute("MATCH (h:Hub {id: 'h'}) SET h.n = h.n + 1")
os._exit(0)  # killed: the WAL is left unreplayed, as a crash or an old hippograph left it
"""


def test_a_log_too_big_for_the_pool_is_replayed_with_a_larger_one_then_the_pool_is_as_set(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.kuzu"
    # 1,500 commits each updating one hub: ~25 MB pinned to replay, more than the 16 MiB pool.
    subprocess.run([sys.executable, "-c", _UNCHECKPOINTED, str(path), "1500"], check=True)
    session = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=_POOL)
    try:
        assert session.run("MATCH (h:Hub) RETURN h.n AS n") == [{"n": 1500}]
        assert session.run("CALL bm_info() RETURN mem_limit")[0]["mem_limit"] == _POOL
        session.run("MATCH (h:Hub {id: $id}) SET h.n = h.n + 1", {"id": "h"})
    finally:
        session.close()
    assert not Path(f"{path}.wal").exists() or Path(f"{path}.wal").stat().st_size < 1 << 20


def test_a_log_no_pool_doubling_can_replay_is_refused_saying_which_setting_opens_it(tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    subprocess.run([sys.executable, "-c", _UNCHECKPOINTED, str(path), "1500"], check=True)
    tiny = 512 << 10  # doubled 5 times: 8 MiB, still less than the ~25 MB the replay pins

    with pytest.raises(StoreError, match="replaying its log needs more than a 8 MiB") as refused:
        KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=tiny)

    assert "HIPPOGRAPH_KUZU_BUFFER_POOL_BYTES" in str(refused.value)
    assert "another hippograph process" not in str(refused.value)
    reopened = KuzuSession(path, max_db_size=1 << 32, buffer_pool_bytes=_POOL)  # nothing was lost
    try:
        assert reopened.run("MATCH (h:Hub) RETURN h.n AS n") == [{"n": 1500}]
    finally:
        reopened.close()
