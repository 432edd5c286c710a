"""The graph store's edge writes and single-fact edge reads (part of ``store.seam.GraphStore``),
kept alike by the embedded Kùzu graph and the PostgreSQL one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hippograph.domain.errors import InternalError
from hippograph.domain.models import EdgeType, Entity
from hippograph.store.seam import Relation
from testkit.facts import make_fact

T0 = datetime(2026, 2, 1, tzinfo=UTC)
MISSING = "f_ffffffffffffffff"


def _fid(i: int) -> str:
    return f"f_{i:016x}"


def _eid(i: int) -> str:
    return f"e_{i:016x}"


def _filled(graph: Any, facts: int = 5, entities: int = 5) -> None:
    with graph.transaction():
        graph.insert_facts(
            [make_fact(f"note {i}", id=_fid(i), at=T0 + timedelta(minutes=i)) for i in range(facts)]
        )
        graph.insert_entities(
            [Entity(id=_eid(i), name=f"Thing {i}", type="tool", scope="global") for i in range(entities)]
        )


def test_a_chain_is_followed_both_ways_with_the_fewest_hops(graph: Any) -> None:
    _filled(graph)
    supersedes = EdgeType.SUPERSEDES.value
    # f4 supersedes f3, which superseded f2, which superseded f1; f4 also superseded f1 directly.
    graph.link_facts_many(
        supersedes,
        [(_fid(i + 1), _fid(i), T0, {"reason": "corrected"}) for i in (1, 2, 3)]
        + [(_fid(4), _fid(1), T0, {})],
    )
    assert graph.chain(_fid(4), supersedes, newer=False) in (
        [(_fid(3), 1), (_fid(1), 1), (_fid(2), 2)],
        [(_fid(1), 1), (_fid(3), 1), (_fid(2), 2)],
    )
    assert sorted(graph.chain(_fid(1), supersedes, newer=True), key=lambda p: (p[1], p[0])) == [
        (_fid(2), 1), (_fid(4), 1), (_fid(3), 2)
    ]  # fmt: skip
    assert graph.chain(_fid(4), supersedes, newer=False, max_depth=1) in (
        [(_fid(3), 1), (_fid(1), 1)],
        [(_fid(1), 1), (_fid(3), 1)],
    )
    assert graph.chain(_fid(0), supersedes, newer=False) == []


def test_an_edge_is_made_only_between_ends_that_exist(graph: Any) -> None:
    _filled(graph)
    causes = EdgeType.CAUSES.value
    graph.link_facts(causes, _fid(0), _fid(1), T0, weight=0.5)
    graph.link_facts(causes, _fid(0), MISSING, T0, weight=0.5)
    assert graph.has_edge(causes, _fid(0), _fid(1)) is True
    assert graph.has_edge(causes, _fid(1), _fid(0)) is False
    assert graph.has_edge(causes, _fid(0), MISSING) is False
    assert graph.has_edge(EdgeType.NEXT.value, _fid(0), _fid(1)) is False
    with pytest.raises(InternalError):
        graph.has_edge("LIKES", _fid(0), _fid(1))


def test_entities_no_fact_is_about_and_no_relation_touches_are_orphans(graph: Any) -> None:
    _filled(graph)
    graph.link_about_many(
        [(_fid(0), _eid(0), "subject"), (_fid(0), _eid(0), "subject"), (MISSING, _eid(3), "mention")]
    )
    graph.link_about(_fid(1), _eid(0), "mention")
    graph.link_entities_many(
        [
            Relation(_eid(1), _eid(2), "uses", 1.0, _fid(0), T0),
            Relation(_eid(4), _eid(9), "uses", 1.0, None, T0),
        ]
    )
    graph.tag_facts([(_fid(0), "ops"), (_fid(0), "ops"), (MISSING, "ops")])
    assert sorted(graph.orphan_entities()) == [_eid(3), _eid(4)]
    graph.delete_entities([_eid(1)])
    assert sorted(graph.orphan_entities()) == [_eid(2), _eid(3), _eid(4)]
    graph.delete_entities([_eid(0)])
    assert sorted(graph.orphan_entities()) == [_eid(2), _eid(3), _eid(4)]
