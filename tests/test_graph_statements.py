"""Kùzu statements are prepared once: kuzu 0.11.3 keeps native memory for every statement it
prepares, so a server that prepared per call grew ~0.5 MB per remember without bound."""

from __future__ import annotations

import pytest

from hippograph.service.memory import Memory

pytestmark = pytest.mark.embedded  # the Kùzu store's prepared statements


def test_remembering_more_prepares_no_new_statements(memory: Memory) -> None:
    def remember(i: int) -> None:
        memory.remember(
            f"Ticket {i}: Ana Lima fixed the flaky login test in Orbit.",
            tags=["work", f"ticket-{i}"],
            entities=["Ana Lima", "Orbit"],
            subject="Ana Lima",
            predicate="works_on",
            object="Orbit",
            session_id="standup",
        )
        memory.search(f"who fixed ticket {i}", limit=5)

    for i in range(3):
        remember(i)
    prepared = set(memory.graph._session._prepared)
    for i in range(3, 12):
        remember(i)

    assert set(memory.graph._session._prepared) == prepared
