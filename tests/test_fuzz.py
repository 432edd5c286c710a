"""Fuzz the tools through the real MCP server in-process: junk is refused clearly, nothing half-written.

HIPPOGRAPH_FUZZ_EXAMPLES sets the number of cases (bench/reliability.py runs thousands).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from hippograph.api import OPERATIONS
from hippograph.config import Settings
from hippograph.mcp_app import build_server
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder

EXAMPLES = int(os.environ.get("HIPPOGRAPH_FUZZ_EXAMPLES", "150"))
INJECTIONS = [
    "'; DROP TABLE facts; --",
    "MATCH (n) DETACH DELETE n",
    '") RETURN n //',
    "$id OR 1=1",
    "id = 'x' OR '1'='1'",
    "{{7*7}} ${jndi:ldap://x}",
]
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=50),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=300),
    st.just("\x00" * 10),
    st.just("x" * 20000),
    st.sampled_from(INJECTIONS),
    st.lists(st.text(max_size=10), max_size=40),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
# Every tool and every parameter it shows clients, from the one declaration of the API.
FIELDS = {op.name: list(op.tool_signature.parameters) for op in OPERATIONS.values() if op.tool}
calls = st.sampled_from(sorted(FIELDS)).flatmap(
    lambda tool: st.tuples(
        st.just(tool), st.dictionaries(st.sampled_from(FIELDS[tool]), junk, max_size=len(FIELDS[tool]))
    )
)


class Harness:
    def __init__(
        self, memory: SharedMemory, portal: anyio.from_thread.BlockingPortal, client: Client
    ) -> None:
        self.memory, self.portal, self.client = memory, portal, client

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        return self.portal.call(self.client.call_tool, tool, arguments)

    def counts(self) -> dict[str, int]:
        assert self.memory.local is not None
        return self.memory.local.graph.census.counts()


@pytest.fixture(scope="module")
def harness(
    tmp_path_factory: pytest.TempPathFactory, models_dir: Path, embedder: FastEmbedder
) -> Iterator[Harness]:
    data_dir = tmp_path_factory.mktemp("fuzz")
    memory = SharedMemory.open(Settings(data_dir=data_dir, models_dir=models_dir), embedder=embedder)
    with anyio.from_thread.start_blocking_portal() as portal:
        client = portal.wrap_async_context_manager(Client(build_server(memory)))
        with client as connected:
            yield Harness(memory, portal, connected)
    memory.close()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=calls)
def test_junk_is_refused_clearly_and_writes_nothing(
    harness: Harness, case: tuple[str, dict[str, Any]]
) -> None:
    tool, arguments = case
    before = harness.counts()
    result = harness.call(tool, arguments)
    if result.is_error:
        message = " ".join(getattr(block, "text", "") for block in result.content)
        # An unanticipated exception reaches the client as this bare phrase: that is a bug.
        assert not re.fullmatch(r"Error executing tool \w+\.?", message.strip()), (tool, arguments)
        assert "Traceback" not in message
        assert len(message) > 20
        assert harness.counts() == before, (tool, arguments)


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_text_is_stored_and_found_as_plain_text(harness: Harness, text: str) -> None:
    before = harness.counts()
    stored = harness.call("remember", {"content": f"literal: {text}"})
    assert not stored.is_error
    found = harness.call("search", {"query": text, "limit": 50})
    assert f"literal: {text}" in [hit["content"] for hit in found.structured_content["results"]]
    assert harness.counts()["facts"] == before["facts"] + 1
