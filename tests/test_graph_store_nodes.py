"""The graph store's facts, entities, meta and transactions (part of ``store.seam.GraphStore``),
kept alike by the embedded Kùzu graph and the PostgreSQL one (whose edges and views come next)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hippograph.domain.models import Entity, FactStatus, Source
from testkit.facts import make_fact

T0 = datetime(2026, 2, 1, 9, 30, 15, 123456, tzinfo=UTC)


def _facts() -> list[Any]:
    return [
        make_fact("Mara leads the Atlas team", id=f"f_{0:016x}", at=T0, subject="Mara", predicate="leads",
                  object="Atlas", tags=("team", "org"), session_id="s1", status=FactStatus.CONFIRMED),
        make_fact("mara LEADS the Orion team", id=f"f_{1:016x}", at=T0 + timedelta(hours=1), subject="mara",
                  predicate="LEADS", object="Orion", session_id="s1", status=FactStatus.CONFIRMED,
                  sources=(Source.CONVERSATION, Source.USER_EDIT)),
        make_fact("Mara leads the Vega team", id=f"f_{2:016x}", at=T0 + timedelta(hours=2), subject="Mara",
                  predicate="leads", scope="project:x", status=FactStatus.CONFIRMED),
        make_fact("The build takes nine minutes", id=f"f_{3:016x}", at=T0 + timedelta(hours=3),
                  session_id="s2", event_time=T0 - timedelta(days=3), status=FactStatus.RETRACTED),
    ]  # fmt: skip


def test_facts_come_back_as_they_were_written_and_in_creation_order(graph: Any) -> None:
    facts = _facts()
    graph.insert_facts(facts)
    assert graph.get_facts([f.id for f in facts[:2]] + ["f_ffffffffffffffff"]) == {f.id: f for f in facts[:2]}
    assert graph.get_fact(facts[3].id) == facts[3]
    assert list(graph.all_facts()) == facts
    assert (graph.fact_count(), graph.fact_ids()) == (4, {f.id for f in facts})
    assert sorted(f.id for f in graph.active_facts()) == [f.id for f in facts[:3]]


def test_lifecycle_changes_are_written_back_and_claims_find_the_active_facts(graph: Any) -> None:
    facts = _facts()
    graph.insert_facts(facts)
    key, other_scope = ("mara", "leads", "global"), ("mara", "leads", "project:x")
    found = graph.active_facts_with([key, other_scope, ("nobody", "leads", "global")])
    assert {k: [f.id for f in v] for k, v in found.items()} == {
        key: [facts[0].id, facts[1].id],
        other_scope: [facts[2].id],
        ("nobody", "leads", "global"): [],
    }
    superseded = dataclasses.replace(
        facts[0], status=FactStatus.SUPERSEDED, status_reason="superseded by f_1",
        valid_until=T0 + timedelta(hours=1), prior_status=FactStatus.CONFIRMED, access_count=3,
        last_accessed=T0 + timedelta(minutes=5),
    )  # fmt: skip
    graph.update_fact_states([superseded])
    assert graph.get_fact(facts[0].id) == superseded
    assert graph.fact_statuses()[facts[0].id] == "superseded"
    assert [f.id for f in graph.active_facts_with([key])[key]] == [facts[1].id]


def test_each_sessions_latest_fact_is_found(graph: Any) -> None:
    graph.insert_facts(_facts())
    assert graph.last_facts_in_sessions([("global", "s1"), ("global", "s2"), ("project:x", "s1")]) == {
        ("global", "s1"): f"f_{1:016x}",
        ("global", "s2"): f"f_{3:016x}",
    }


def test_entities_count_mentions_change_type_and_go(graph: Any) -> None:
    mara = Entity(id=f"e_{0:016x}", name="Mara Lind", type="concept", scope="global", aliases=("ML",),
                  mention_count=1, first_seen=T0, last_mentioned=T0)  # fmt: skip
    atlas = Entity(id=f"e_{1:016x}", name="Atlas", type="project", scope="project:x")
    graph.insert_entities([mara, atlas])
    later = T0 + timedelta(days=1)
    graph.touch_entities({mara.id: (2, later)})
    graph.retype_entities({mara.id: "person"})
    expected = dataclasses.replace(mara, type="person", mention_count=3, last_mentioned=later)
    assert graph.entities([mara.id, "e_ffffffffffffffff"]) == {mara.id: expected}
    assert sorted(e.id for e in graph.all_entities()) == [mara.id, atlas.id]
    graph.delete_entities([atlas.id])
    assert graph.entities([atlas.id]) == {}


def test_a_failed_transaction_writes_nothing_and_meta_is_kept(graph: Any) -> None:
    facts = _facts()
    with pytest.raises(RuntimeError), graph.transaction():
        graph.insert_facts(facts[:2])
        graph.set_meta("marker", "in the failed transaction")
        raise RuntimeError("the write failed half way")
    assert (graph.fact_count(), graph.get_meta("marker")) == (0, None)
    with graph.transaction():
        graph.insert_facts(facts[:2])
        graph.set_meta("marker", "kept")
    assert (graph.fact_count(), graph.get_meta("marker")) == (2, "kept")
