"""The scoped graph reads (``store.seam.GraphView``) of the PostgreSQL store answer as those of
the embedded graph do: the same graph written to both through the GraphStore writes, then every
read asked of both for callers who see every scope, one project and global, and global alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hippograph.domain.models import ACTIVE_STATUSES, EdgeType, Entity, FactStatus
from hippograph.store.seam import Relation
from testkit.facts import make_fact

T0 = datetime(2026, 2, 1, tzinfo=UTC)
SCOPES = ["global", "project:x", "project:y"]
VIEWS = [None, ["global", "project:x"], ["global"], ["project:y"]]


def _fid(i: int) -> str:
    return f"f_{i:016x}"


def _eid(i: int) -> str:
    return f"e_{i:016x}"


def _write(graph: Any) -> None:
    statuses = [FactStatus.CONFIRMED, FactStatus.STAGED, FactStatus.SUPERSEDED, FactStatus.DORMANT]
    facts = [
        make_fact(f"note {i}", id=_fid(i), at=T0 + timedelta(minutes=i), scope=SCOPES[i % 3],
                  status=statuses[i % 4], session_id=f"s{i % 2}")
        for i in range(12)
    ]  # fmt: skip
    entities = [
        Entity(id=_eid(i), name=name, type="person", scope=SCOPES[i % 3])
        for i, name in enumerate(["Mara Lind", "mara", "Atlas", "Orion", "Maple", "Vega"])
    ]
    with graph.transaction():
        graph.insert_facts(facts)
        graph.insert_entities(entities)
    graph.link_about_many(
        [(_fid(i), _eid(i % 6), "subject") for i in range(12)]
        + [(_fid(i), _eid((i + 3) % 6), "mention") for i in range(0, 12, 2)]
        + [(_fid(i), _eid((i + 1) % 6), "object") for i in range(1, 12, 3)]
    )
    graph.link_facts_many(
        EdgeType.SUPERSEDES.value, [(_fid(i + 3), _fid(i), T0, {"reason": "newer"}) for i in range(6)]
    )
    graph.link_facts_many(
        EdgeType.NEXT.value, [(_fid(i), _fid(i + 2), T0 + timedelta(seconds=i), {}) for i in range(9)]
    )
    graph.link_facts_many(
        EdgeType.RELATES_TO.value, [(_fid(0), _fid(5), T0, {"relation": "co_used", "weight": 0.4})]
    )
    graph.reweigh_relations("co_used", [(_fid(0), _fid(5), 0.7)])
    graph.link_facts(EdgeType.CAUSES.value, _fid(6), _fid(9), T0, weight=0.9)
    graph.link_entities_many(
        [
            Relation(_eid(0), _eid(3), "uses", 0.5, _fid(0), T0),
            Relation(_eid(3), _eid(0), "uses", 2.0, None, T0),
            Relation(_eid(0), _eid(1), "knows", 1.0, _fid(1), T0),
            Relation(_eid(2), _eid(0), "leads", -1.0, None, T0),
            Relation(_eid(4), _eid(5), "near", 0.3, None, T0),
        ]
    )
    graph.tag_facts(
        [(_fid(i), "ops") for i in range(0, 12, 3)] + [(_fid(i), "trigger:force-push") for i in (1, 4, 7)]
    )
    graph.tag_facts([(_fid(2), "team"), (_fid(5), "team"), (_fid(2), "ops")])


@pytest.fixture
def both(graph_pair: tuple[Any, Any]) -> tuple[Any, Any]:
    for graph in graph_pair:
        _write(graph)
    return graph_pair


@pytest.mark.parametrize("scopes", VIEWS, ids=["every scope", "global and x", "global", "y"])
def test_every_scoped_read_answers_as_the_embedded_graph_does(
    both: tuple[Any, Any], scopes: list[str] | None
) -> None:
    facts, entities = [_fid(i) for i in range(12)], [_eid(i) for i in range(6)]
    active = list(ACTIVE_STATUSES)
    reads: dict[str, Any] = {
        "sees": lambda v: [v.sees(node) for node in (*facts, *entities)],
        "statuses": lambda v: v.statuses(facts),
        "fact_edges": lambda v: v.fact_edges([_fid(5), _fid(0), _fid(9)]),
        "fact_edges of two types": lambda v: v.fact_edges(facts[:6], [EdgeType.NEXT, EdgeType.CAUSES]),
        "about_edges": lambda v: v.about_edges([_fid(4), _fid(1), _fid(0)]),
        "about_any": lambda v: v.about_any(facts, [_eid(3), _eid(4)]),
        "centred_on_any": lambda v: v.centred_on_any(facts, [_eid(0), _eid(3)]),
        "facts_about": lambda v: [v.facts_about(e, limit=3, statuses=active) for e in entities],
        "facts_about_many": lambda v: v.facts_about_many([*entities, entities[0]], limit=2, statuses=active),
        "entity_relations": lambda v: v.entity_relations([_eid(0), _eid(4)]),
        "related_entities": lambda v: v.related_entities(entities, limit=2),
        "linked": lambda v: [
            v.linked(edge, active, limit=3) for edge in ("NEXT", "SUPERSEDES", "RELATES_TO")
        ],
        "oldest": lambda v: v.oldest(active, limit=4),
        "tagged": lambda v: v.tagged("trigger:", active),
        "tag_neighbours": lambda v: v.tag_neighbours([_fid(0), _fid(2), _fid(3)], limit=4),
        # One row (the first tag's newest seen fact: past unseen ones), and every tag read.
        "tag_neighbours, one": lambda v: [v.tag_neighbours([fid], limit=1) for fid in facts],
        "tag_neighbours, all": lambda v: v.tag_neighbours(facts[::-1], limit=40),
        "entity_names_for": lambda v: v.entity_names_for(facts[:5]),
        "entity_names": lambda v: v.entity_names("ma", limit=5),
        "scopes": lambda v: v.scopes("", limit=10),
    }
    kuzu, pg = (graph.view(scopes) for graph in both)
    for name, read in reads.items():
        assert read(pg) == read(kuzu), name


@pytest.mark.parametrize("scopes", VIEWS, ids=["every scope", "global and x", "global", "y"])
def test_a_view_keeping_its_about_rows_answers_as_one_that_reads_them_each_time(
    both: tuple[Any, Any], scopes: list[str] | None
) -> None:
    """A search asks for the ABOUT rows of overlapping facts up to three times (``keeping_about``)."""
    facts, entities = [_fid(i) for i in range(12)], [_eid(0), _eid(3), _eid(4)]
    for graph in both:
        fresh, keeping = graph.view(scopes), graph.view(scopes).keeping_about()
        for asked in ([_fid(4), _fid(1)], facts[::-1], [_fid(1), _fid(11), _fid(0)], facts, []):
            assert keeping.about_edges(asked) == fresh.about_edges(asked)
            assert keeping.about_any(asked, entities) == fresh.about_any(asked, entities)
            assert keeping.centred_on_any(asked, entities) == fresh.centred_on_any(asked, entities)


def test_the_newest_facts_about_a_hub_come_once_each_newest_first_as_the_embedded_graph_lists_them(
    graph_pair: tuple[Any, Any],
) -> None:
    hub = Entity(id=_eid(50), name="Hub", type="project", scope="global")
    facts = [make_fact(f"hub {i}", id=_fid(100 + i), at=T0 + timedelta(minutes=i)) for i in range(40)]
    for graph in graph_pair:
        with graph.transaction():
            graph.insert_facts(facts)
            graph.insert_entities([hub])
        # The newest eight name the hub twice (subject and mention): each must come once.
        graph.link_about_many(
            [(f.id, hub.id, "subject") for f in facts] + [(f.id, hub.id, "mention") for f in facts[32:]]
        )
    active = list(ACTIVE_STATUSES)
    for limit in (1, 3, 8, 12, 50):
        kuzu, pg = (
            graph.view(None).facts_about(hub.id, limit=limit, statuses=active) for graph in graph_pair
        )
        assert pg == kuzu == [f.id for f in reversed(facts)][:limit], limit
        kuzu_many, pg_many = (
            graph.view(None).facts_about_many([hub.id, _eid(51)], limit=limit, statuses=active)
            for graph in graph_pair
        )
        assert pg_many == kuzu_many == {hub.id: kuzu, _eid(51): []}, limit


def test_entities_are_found_by_name_alias_and_first_name_as_the_embedded_graph_finds_them(
    both: tuple[Any, Any],
) -> None:
    more = [
        Entity(id=_eid(10), name="Priya Raman", type="person", scope="project:x", aliases=("P. Raman",)),
        Entity(id=_eid(11), name="Priya Shah", type="person", scope="project:y"),
        Entity(id=_eid(12), name="Atlas", type="project", scope="project:x"),  # global has an Atlas too
        Entity(id=_eid(13), name="Tomasz Nowak", type="concept", scope="global", aliases=("Tom",)),
    ]
    for graph in both:
        graph.insert_entities(more)
        graph.retype_entities({_eid(13): "organization"})  # no longer found by its first word
        graph.delete_entities([_eid(5)])
    texts = ["Priya and Tomasz met Mara Lind about Atlas", "P. Raman asked Tom about Vega and Orion"]
    for scope in ("global", "project:x", "project:y"):
        kuzu, pg = (graph.names for graph in both)
        for name in ("Atlas", "atlas", "P. Raman", "Tom", "Vega", "Mara Lind", "mara"):
            assert pg.resolve(name, scope) == kuzu.resolve(name, scope), (name, scope)
        for first in ("Priya", "Tomasz", "Mara"):
            assert pg.by_first_name(first, scope) == kuzu.by_first_name(first, scope), (first, scope)
        for text in texts:
            assert pg.mentions(text, scope) == kuzu.mentions(text, scope), (text, scope)


def test_related_entities_follow_relations_removed_as_the_embedded_graph_does(
    graph_pair: tuple[Any, Any],
) -> None:
    from hippograph.domain import lifecycle as lc

    people = [Entity(id=_eid(60 + i), name=f"P{i}", type="person", scope=SCOPES[i % 2]) for i in range(6)]
    stating = [make_fact(f"rel {i}", id=_fid(200 + i), at=T0) for i in range(8)]
    # Several relations a pair, both ways, some stated by a fact: the strongest one goes first.
    relations = [
        Relation(_eid(60), _eid(61), "knows", 0.9, _fid(200), T0),
        Relation(_eid(61), _eid(60), "knows", 0.4, _fid(201), T0),
        Relation(_eid(60), _eid(61), "knows", 1.5, _fid(202), T0),  # 1 to the walk
        Relation(_eid(60), _eid(62), "leads", 0.7, _fid(203), T0),
        Relation(_eid(62), _eid(60), "leads", -0.2, None, T0),  # 0 to the walk
        Relation(_eid(60), _eid(63), "near", 0.5, _fid(204), T0),
        Relation(_eid(63), _eid(64), "near", 0.6, None, T0),
        Relation(_eid(64), _eid(64), "self", 0.3, _fid(205), T0),
        Relation(_eid(65), _eid(60), "uses", 0.8, _fid(206), T0),
    ]
    for graph in graph_pair:
        with graph.transaction():
            graph.insert_facts(stating)
            graph.insert_entities(people)
        graph.link_entities_many(relations)
    asked = [_eid(60 + i) for i in range(6)]

    def same() -> None:
        for scopes in VIEWS:
            kuzu, pg = (graph.view(scopes).related_entities(asked, limit=2) for graph in graph_pair)
            assert pg == kuzu, scopes
        pg_graph = graph_pair[1]
        with pg_graph._db.transaction() as conn:
            kept = conn.execute("SELECT a, b, w FROM hg_neighbour ORDER BY a, b").fetchall()
            walked = "CASE WHEN weight IS NULL THEN 1.0 ELSE least(greatest(weight, 0.0), 1.0) END"
            fresh = conn.execute(
                f"SELECT a, b, max(w) FROM (SELECT src AS a, dst AS b, {walked} AS w FROM hg_relates "
                f"UNION ALL SELECT dst, src, {walked} FROM hg_relates) x GROUP BY a, b ORDER BY a, b"
            ).fetchall()
        assert kept == fresh and kept

    same()
    gone = [stating[2], stating[0], stating[5]]  # the two strongest of 60-61, and 64's own
    for graph in graph_pair:
        graph.purge_facts([lc.purge(f, T0) for f in gone], [])
    same()
    for graph in graph_pair:
        graph.delete_entities([_eid(63)])
    same()
