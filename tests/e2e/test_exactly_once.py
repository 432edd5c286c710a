"""A proxied write runs once across owners: proxies retrying through kill -9s of the owner
process write each conversation turn once.

(A retry with its request id answered with the first reply, in process: tests/test_exactly_once.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.workloads import owner_kills, verify

pytestmark = pytest.mark.anyio


async def test_proxies_retrying_across_owner_kills_write_each_turn_once(
    tmp_path: Path, models_dir: Path
) -> None:
    tally = await owner_kills(tmp_path / "data", models_dir, rounds=2, proxies=2, writes_each=12)
    assert tally.acknowledged
    report = verify(tmp_path / "data", models_dir, tally.acknowledged)
    assert report["missing"] == 0
    assert report["duplicated"] == 0
    assert report["index_disagrees"] == 0
