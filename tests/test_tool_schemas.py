"""The tool schemas clients see are pinned: a rename, a new required argument or a changed
annotation fails here until ``tests/golden/tools.json`` is updated on purpose.

To accept a deliberate change: ``HIPPOGRAPH_UPDATE_GOLDEN=1 pytest tests/test_tool_schemas.py``,
then review the diff of the golden file like any other API change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import Client

from hippograph.config import Settings
from hippograph.mcp_app import build_server
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).parent / "golden" / "tools.json"


async def test_tool_schemas_match_the_golden_file(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    memory = SharedMemory.open(Settings(data_dir=tmp_path / "data", models_dir=models_dir), embedder=embedder)
    try:
        async with Client(build_server(memory)) as client:
            tools = (await client.list_tools()).tools
    finally:
        memory.close()
    listed = {
        tool.name: tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        for tool in sorted(tools, key=lambda t: t.name)
    }
    text = json.dumps(listed, indent=2, sort_keys=True) + "\n"
    if os.environ.get("HIPPOGRAPH_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert json.loads(text) == json.loads(GOLDEN.read_text(encoding="utf-8"))
