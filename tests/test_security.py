"""Scopes isolate memories: a project's facts never reach another project's reads, nor global ones.

(HTTP transports checking Host/Origin and the bearer token: tests/e2e/test_security.py.)"""

from __future__ import annotations

from hippograph.service.memory import Memory


def test_scopes_never_leak_into_each_other(memory: Memory) -> None:
    shared = memory.remember("The office wifi is called Nebula")
    alpha = memory.remember("Alpha ships on Fridays", scope="project:alpha", entities=["Release train"])
    beta = memory.remember("Beta ships on Mondays", scope="project:beta", entities=["Release train"])

    seen_from_alpha = {h.id for h in memory.search("when do we ship", scope="project:alpha").results}
    assert alpha.id in seen_from_alpha and beta.id not in seen_from_alpha
    assert shared.id in {h.id for h in memory.search("wifi name", scope="project:alpha").results}
    seen_globally = {h.id for h in memory.search("when do we ship").results}
    assert alpha.id not in seen_globally and beta.id not in seen_globally
    # Same entity name in two projects: two entities, and the graph does not cross over.
    assert alpha.linked_entities[0].id != beta.linked_entities[0].id
    via_entity = memory.search("Release train", scope="project:beta").results
    assert {h.id for h in via_entity} <= {beta.id, shared.id}
    recalled = memory.recall("shipping days", scope="project:beta")
    assert "Alpha" not in recalled.narrative
