"""Arguments a tool does not declare are an error naming them over the owner's RPC too: a proxy
in this process asks a real stdio server that owns the data dir.

(Over MCP, with an in-process client: tests/test_tool_arguments.py.)"""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
import pytest

from hippograph.domain.errors import InvalidInput
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder
from testkit.client import call, stdio_session
from testkit.process import settings_at

pytestmark = pytest.mark.anyio


async def test_the_owner_rpc_refuses_an_unknown_argument_the_same_way(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = tmp_path / "data"
    async with stdio_session(data_dir, models_dir) as owner:
        await call(owner, "search", query="anything")  # the server process now owns the data dir
        proxy = SharedMemory.open(settings_at(data_dir, models_dir), embedder=embedder)
        try:
            assert not proxy.is_owner
            arguments = {"content": "Ines likes dates", "bogus_field": 1}
            with pytest.raises(InvalidInput) as refused:
                await anyio.to_thread.run_sync(lambda: proxy.call("remember", arguments))
            assert "unknown argument 'bogus_field' for remember: it takes only content, kind" in str(
                refused.value
            )
            assert (await call(owner, "search", query="Ines likes dates"))["results"] == []
        finally:
            proxy.close()
