"""One scope rule for every read: a caller sees its scope and global, never another scope's facts.

Channels (vector, BM25, entity, graph walk, neighbour share, tags), explain and recall are all
checked against random worlds: facts in random scopes and sessions (one session id used in
several scopes), tags and links within scopes, and edges across scopes as a store written
before the rule may hold them.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippograph.config import Settings
from hippograph.domain.errors import InvalidInput, NotFound
from hippograph.domain.models import ACTIVE_STATUSES, HISTORY_STATUSES, EdgeType
from hippograph.domain.visibility import visible_scopes
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder

SCOPES = ["global", "project:falcon", "project:hack"]
WORDS = ["falcon", "launch", "vault", "lunch", "budget", "server", "deploy", "garden", "coffee", "rocket"]
TAGS = ["red", "blue"]
NAMES = ["Orion", "Vega"]
KINDS = ["fact", "episode", "decision"]
STATUSES = ["staged", "confirmed", "superseded", "retracted", "dormant"]
ID = re.compile(r"\b[fe]_[0-9a-f]{16}\b")

facts = st.fixed_dictionaries(
    {
        "words": st.lists(st.sampled_from(WORDS), min_size=2, max_size=4),
        "scope": st.sampled_from(SCOPES),
        "session": st.sampled_from([None, "s1", "s2"]),
        "kind": st.sampled_from(KINDS),
        "tags": st.lists(st.sampled_from(TAGS), max_size=2, unique=True),
        "entities": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
    }
)
worlds = st.fixed_dictionaries(
    {
        "facts": st.lists(facts, min_size=6, max_size=14),
        # (index, index) pairs: linked if the two facts share a scope; else joined by the store
        # directly, as a store written before links and sessions were kept within scopes may be.
        "links": st.lists(st.tuples(st.integers(0, 13), st.integers(0, 13)), max_size=6),
        "corrections": st.lists(st.integers(0, 13), max_size=3, unique=True),
        "forgotten": st.lists(st.integers(0, 13), max_size=2, unique=True),
    }
)
queries = st.fixed_dictionaries(
    {
        "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        "scope": st.sampled_from([*SCOPES, "project:other"]),
        "status": st.one_of(st.none(), st.lists(st.sampled_from(STATUSES), min_size=1, max_size=2)),
        "kind": st.one_of(st.none(), st.lists(st.sampled_from(KINDS), min_size=1, max_size=2)),
        "tags": st.one_of(st.none(), st.lists(st.sampled_from(TAGS), min_size=1, max_size=1)),
        "include_history": st.booleans(),
    }
)


def _build(memory: Memory, world: dict[str, Any]) -> dict[str, Any]:
    """Write the world; return every fact id and entity id with its scope."""
    stored = []
    for i, spec in enumerate(world["facts"]):
        stored.append(
            memory.remember(
                f"{' '.join(spec['words'])} mk{i:03d}",
                scope=spec["scope"],
                session_id=spec["session"],
                kind=spec["kind"],
                tags=spec["tags"],
                entities=spec["entities"],
            )
        )
    now = datetime(2030, 1, 1, tzinfo=UTC)
    for a, b in world["links"]:
        if a < len(stored) and b < len(stored) and stored[a].id != stored[b].id:
            if stored[a].scope == stored[b].scope:
                memory.link(stored[a].id, stored[b].id, "relates_to", scope=stored[a].scope)
            else:
                memory.graph.link_facts(EdgeType.NEXT, stored[a].id, stored[b].id, now)
    for i in world["corrections"]:
        if i < len(stored) and memory.graph.get_fact(stored[i].id).status.is_active:  # type: ignore[union-attr]
            memory.correct(
                f"corrected {' '.join(world['facts'][i]['words'])} mk{100 + i:03d}",
                fact_id=stored[i].id,
                scope=stored[i].scope,
            )
    for i in world["forgotten"]:
        if i < len(stored):
            memory.forget(stored[i].id, scope=stored[i].scope)
    scope_of = {f.id: f.scope for f in memory.graph.all_facts()}
    scope_of.update({e.id: e.scope for e in memory.graph.all_entities()})
    return scope_of


def _named_ids(value: Any) -> set[str]:
    return set(ID.findall(json.dumps(value, default=str)))


def _check_query(memory: Memory, scope_of: dict[str, str], q: dict[str, Any]) -> None:
    visible = set(visible_scopes(q["scope"]))
    found = memory.search(
        " ".join(q["words"]),
        scope=q["scope"],
        status=q["status"],
        kind=q["kind"],
        tags=q["tags"],
        include_history=q["include_history"],
        limit=20,
        detail=True,
    )
    allowed = set(q["status"] or (HISTORY_STATUSES if q["include_history"] else ACTIVE_STATUSES))
    for hit in found.results:
        assert hit.scope in visible, (q, hit.id, hit.scope)
        leaked = {i for i in _named_ids(hit.model_dump()) if scope_of[i] not in visible}
        assert leaked == set(), (q, hit.id, hit.reasons)
        assert hit.status in allowed, (q, hit.id, hit.status, hit.reasons)
        assert q["kind"] is None or hit.kind in q["kind"], (q, hit.id)
        assert q["tags"] is None or set(hit.tags) & set(q["tags"]), (q, hit.id)
        # explain shows what the fact's own scope sees, which the caller sees too.
        own = set(visible_scopes(hit.scope))
        explained = memory.explain(hit.id, scope=q["scope"]).model_dump()
        assert {i for i in _named_ids(explained) if scope_of[i] not in own} == set(), (hit.id, explained)
    recalled = memory.recall(" ".join(q["words"]), scope=q["scope"])
    assert {i for i in _named_ids(recalled.model_dump()) if scope_of[i] not in visible} == set()
    hidden_markers = {
        m
        for f in memory.graph.all_facts()
        if f.scope not in visible
        for m in re.findall(r"mk\d{3}", f.content)
    }
    assert not set(re.findall(r"mk\d{3}", recalled.narrative)) & hidden_markers, q
    # An operation on a fact id sees what the caller's scope sees: another scope's fact is not
    # found, in the words an id that never existed gets.
    unknown = _refusal(memory, "f_" + "0" * 16, q["scope"])
    for fid, scope in scope_of.items():
        if fid.startswith("f_") and scope in visible:
            assert memory.explain(fid, scope=q["scope"]).fact.id == fid
        elif fid.startswith("f_"):
            assert _refusal(memory, fid, q["scope"]) == unknown, (fid, scope, q["scope"])


def _refusal(memory: Memory, fact_id: str, scope: str) -> str:
    with pytest.raises(NotFound) as refused:
        memory.explain(fact_id, scope=scope)
    return str(refused.value).replace(fact_id, "<id>")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=worlds, asked=st.lists(queries, min_size=3, max_size=5))
def test_no_read_names_a_fact_outside_the_callers_scopes(
    models_dir: Path,
    embedder: FastEmbedder,
    empty_store: Path,
    world: dict[str, Any],
    asked: list[dict[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(empty_store, Path(tmp) / "data")
        memory = Memory.open(Settings(data_dir=Path(tmp) / "data", models_dir=models_dir), embedder=embedder)
        try:
            scope_of = _build(memory, world)
            for q in asked:
                _check_query(memory, scope_of, q)
        finally:
            memory.close()


def test_a_shared_session_id_does_not_carry_a_fact_into_another_scope(memory: Memory) -> None:
    falcon = memory.remember(
        "Falcon launch codes are kept in the blue vault", scope="project:falcon", session_id="s1"
    )
    hack = memory.remember("Hack team lunch is on Thursday", scope="project:hack", session_id="s1")
    # No name in the query: one no hack fact mentions would get "no confident match".
    found = memory.search("launch codes kept in the blue vault", scope="project:hack")
    assert [h.id for h in found.results] == [hack.id]
    assert falcon.id not in json.dumps([h.model_dump() for h in found.results])
    assert memory.graph.view(None).fact_edges([hack.id]) == []  # a session per scope: no NEXT link


def test_status_superseded_returns_only_superseded_facts(memory: Memory) -> None:
    old = memory.remember("The deploy window is Tuesday night", session_id="ops")
    memory.remember("Deploys need two reviewers", session_id="ops")
    new = memory.correct("The deploy window is Wednesday night", fact_id=old.id)
    memory.confirm(new.id)
    found = memory.search("deploy window night", status=["superseded"])
    assert [(h.id, h.status) for h in found.results] == [(old.id, "superseded")]


def test_link_across_scopes_is_refused_and_writes_nothing(memory: Memory) -> None:
    falcon = memory.remember("Falcon ships in May", scope="project:falcon", entities=["Falcon"])
    hack = memory.remember("Hack week is in June", scope="project:hack", entities=["Hackweek"])
    office = memory.remember("The office closes in August", entities=["Office"])  # global
    before = memory.graph.census.counts()
    # Both ends seen from project:falcon, but the link would join its fact to a global one.
    for src, dst in ((falcon.id, office.id), (office.id, falcon.linked_entities[0].id)):
        with pytest.raises(InvalidInput, match=r"scope '(project:falcon|global)'.*'(global|project:falcon)'"):
            memory.link(src, dst, "relates_to" if dst.startswith("f_") else "about", scope="project:falcon")
    # An end project:falcon does not see is not found at all.
    for src, dst in (
        (falcon.id, hack.id),
        (falcon.id, hack.linked_entities[0].id),
        (falcon.linked_entities[0].id, hack.linked_entities[0].id),
    ):
        with pytest.raises(NotFound, match=r"no (fact|entity) has id [fe]_\w+ in project:falcon or global"):
            memory.link(src, dst, "relates_to" if dst.startswith("f_") else "about", scope="project:falcon")
    assert memory.graph.census.counts() == before
    assert memory.explain(falcon.id, scope="project:falcon").edges == []
