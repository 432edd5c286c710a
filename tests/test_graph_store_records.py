"""The graph store's receipts, census, listing and purge (part of ``store.seam.GraphStore``), kept
alike by the embedded Kùzu graph and the PostgreSQL one: both are written the same way, then
asked the same things."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hippograph.domain import lifecycle as lc
from hippograph.domain.models import EdgeType, Entity, FactKind, FactStatus
from hippograph.store.seam import Receipt, Relation
from testkit.facts import make_fact

T0 = datetime(2026, 2, 1, tzinfo=UTC)


def _fid(i: int) -> str:
    return f"f_{i:016x}"


def _eid(i: int) -> str:
    return f"e_{i:016x}"


def _write(graph: Any) -> None:
    kinds = [FactKind.FACT, FactKind.PROCEDURE, FactKind.DECISION]
    facts = [
        make_fact(f"note {i}", id=_fid(i), at=T0 + timedelta(minutes=i), scope=("global", "project:x")[i % 2],
                  kind=kinds[i % 3], status=(FactStatus.CONFIRMED, FactStatus.STAGED)[i % 2], tags=("ops",))
        for i in range(8)
    ]  # fmt: skip
    with graph.transaction():
        graph.insert_facts(facts)
        graph.insert_entities(
            [Entity(id=_eid(i), name=f"Thing {i}", type="tool", scope="global") for i in range(3)]
        )
    graph.link_about_many([(_fid(i), _eid(i % 3), "subject") for i in range(8)])
    graph.link_facts_many(EdgeType.NEXT.value, [(_fid(i), _fid(i + 1), T0, {}) for i in range(7)])
    graph.link_facts(EdgeType.CAUSES.value, _fid(0), _fid(3), T0, weight=0.8)
    graph.link_entities_many([Relation(_eid(0), _eid(1), "uses", 0.5, _fid(2), T0)])
    graph.tag_facts([(_fid(i), "ops") for i in range(8)] + [(_fid(2), "team")])


@pytest.fixture
def both(graph_pair: tuple[Any, Any]) -> tuple[Any, Any]:
    for graph in graph_pair:
        _write(graph)
    return graph_pair


def _edges(graph: Any) -> list[tuple[str, str, str, list[tuple[str, Any]]]]:
    return sorted((str(e.type), e.src, e.dst, sorted(e.props.items())) for e in graph.census.all_edges())


def test_the_census_counts_and_lists_alike(both: tuple[Any, Any]) -> None:
    kuzu, pg = both
    assert pg.census.counts() == kuzu.census.counts() == {"facts": 8, "entities": 3, "edges": 26}
    for column in ("kind", "status", "scope"):
        assert pg.census.count_by(column) == kuzu.census.count_by(column), column
    assert _edges(pg) == _edges(kuzu)
    for scopes, kinds in ((["global"], ["fact", "decision"]), (["global", "project:x"], ["procedure"])):
        asked = (scopes, kinds, ["confirmed", "staged"])
        assert pg.listing.newest(*asked, limit=2) == kuzu.listing.newest(*asked, limit=2)


def test_a_purged_fact_keeps_its_id_and_chain_and_loses_its_text_and_links_alike(
    both: tuple[Any, Any],
) -> None:
    for graph in both:
        fact = graph.get_fact(_fid(2))
        tomb = lc.purge(fact, T0 + timedelta(days=1))
        with graph.transaction():
            assert graph.purge_facts([tomb], fact.tags) == {_eid(2)}
        assert graph.get_fact(_fid(2)) == tomb
        graph.rebuild()
    kuzu, pg = both
    assert _edges(pg) == _edges(kuzu)
    assert not [e for e in _edges(pg) if _fid(2) in (e[1], e[2]) and e[0] != EdgeType.NEXT.value]
    assert pg.view(None).fact_edges([_fid(2)]) == kuzu.view(None).fact_edges([_fid(2)])


@pytest.mark.parametrize("engine", [0, 1], ids=["kuzu", "postgresql"])
def test_a_receipt_exists_exactly_when_its_write_committed(both: tuple[Any, Any], engine: int) -> None:
    graph = both[engine]
    receipts = graph.receipts
    receipts.commit_with_next_write("r-1", "remember", T0)
    assert receipts.waiting() and receipts.get("r-1") is None
    with pytest.raises(RuntimeError), graph.transaction():
        graph.set_meta("x", "y")
        raise RuntimeError("the write failed")
    receipts.abandon()
    assert not receipts.waiting() and receipts.get("r-1") is None
    receipts.commit_with_next_write("r-2", "remember", T0)
    with graph.transaction():
        graph.set_meta("x", "z")
    assert not receipts.waiting()
    assert receipts.get("r-2") == Receipt("remember", None)
    receipts.store_reply("r-2", "remember", '{"id": "f_1"}', T0)
    receipts.commit_with_next_write("r-3", "confirm", T0 + timedelta(hours=1))
    receipts.store_reply("r-3", "confirm", "{}", T0 + timedelta(hours=1))  # a write without a transaction
    assert (receipts.get("r-2"), receipts.get("r-3")) == (
        Receipt("remember", '{"id": "f_1"}'),
        Receipt("confirm", "{}"),
    )
    receipts.drop_before(T0 + timedelta(minutes=30))
    assert (receipts.get("r-2"), receipts.get("r-3")) == (None, Receipt("confirm", "{}"))
    receipts.drop_all()
    assert receipts.get("r-3") is None


def test_both_engines_say_they_hold_one_graph_model(graph_pair: tuple[Any, Any]) -> None:
    """An export carries the graph's model version and an import refuses a newer one: the
    engines' own schema steps differ, the model they hold must not (or no export moves)."""
    embedded, postgres = graph_pair
    assert embedded.schema_version() == postgres.schema_version()
