"""When the owner of a data dir, a real stdio server, exits, a proxy server takes over its stores.

(The owner's files private to its user, proved before trusted, and leaving nothing behind, in
process: tests/test_owner_trust.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from hippograph.sharing.ownership import read_owner
from testkit.client import call, stdio_session

pytestmark = pytest.mark.anyio


async def test_when_the_owner_exits_a_proxy_takes_over(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    kept: dict[str, Any] = {}
    owning, leave, gone = anyio.Event(), anyio.Event(), anyio.Event()

    async def first_server() -> None:
        async with stdio_session(data_dir, models_dir) as owner:
            kept.update(await call(owner, "remember", content="Tomas drives an electric car"))
            owning.set()
            await leave.wait()
        gone.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(first_server)
        await owning.wait()
        first = read_owner(data_dir)
        assert first is not None
        async with stdio_session(data_dir, models_dir) as survivor:
            await call(survivor, "search", query="Tomas")
            assert read_owner(data_dir) == first  # the survivor is a proxy of the first server
            leave.set()
            await gone.wait()
            # The owner is gone; the survivor's next call opens the stores itself.
            added = await call(survivor, "remember", content="Tomas charges it at night")
            second = read_owner(data_dir)
            assert second is not None and second.pid != first.pid
            hits = {h["id"] for h in (await call(survivor, "search", query="Tomas car"))["results"]}
            assert {kept["id"], added["id"]} <= hits
