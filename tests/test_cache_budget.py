"""One memory budget bounds every cache the stores keep (issue 22): its shares add up to it, the
graph engine's page cache never falls below what its checkpoints need, and a budget too small
for that is refused with the setting named."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pydantic import ValidationError

from hippograph.config import MEMORY_BUDGET_MIN, Settings
from hippograph.store.backends import open_graph
from hippograph.store.cache_budget import DEFAULT_SHARES, CacheBudget, budget_for

GRAPH_PAGES_MIN = 32 << 20  # ladybug's checkpoints need this much page cache


@pytest.mark.parametrize("total", [MEMORY_BUDGET_MIN, 128 << 20, 1 << 30, (200 << 20) + 12_345])
def test_the_shares_add_up_to_the_budget_and_the_graph_gets_its_minimum(total: int) -> None:
    shares = CacheBudget.split(total)
    assert sum(dataclasses.astuple(shares)) <= total
    assert sum(dataclasses.astuple(shares)) > total - 64  # nothing but rounding is left over
    assert shares.graph_pages >= GRAPH_PAGES_MIN
    assert all(part > 0 for part in dataclasses.astuple(shares))


def test_the_default_is_the_settings_default() -> None:
    assert CacheBudget.split(Settings().memory_budget_bytes) == DEFAULT_SHARES
    assert DEFAULT_SHARES.graph_pages == 64 << 20


@pytest.mark.parametrize("pages", [GRAPH_PAGES_MIN, 64 << 20, 300 << 20, (77 << 20) + 1])
def test_the_budget_named_for_a_page_cache_gives_the_graph_at_least_that(pages: int) -> None:
    budget = budget_for(pages)
    assert CacheBudget.split(budget).graph_pages >= pages
    assert budget >= MEMORY_BUDGET_MIN


def test_a_budget_too_small_for_the_graph_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HIPPOGRAPH_MEMORY_BUDGET_BYTES", str(48 << 20))
    with pytest.raises(ValidationError, match="memory_budget_bytes"):
        Settings()
    with pytest.raises(ValueError, match="64 MiB"):
        CacheBudget.split(48 << 20)


@pytest.mark.embedded
def test_the_embedded_graph_opens_with_its_share_as_page_cache(tmp_path: Path) -> None:
    graph = open_graph(Settings(data_dir=tmp_path, memory_budget_bytes=256 << 20))
    try:
        assert graph._session.run("CALL bm_info() RETURN mem_limit") == [{"mem_limit": 128 << 20}]
    finally:
        graph.close()
