"""An operation on a fact id sees what its caller's scope sees: its own scope and global.

explain, confirm, forget (and purge), mark_used, correct and link, asked from another scope about
a fact, answer exactly as for an id that never existed, and change nothing. A caller in global
sees global alone, as its search does.

(``hippograph forget`` run as a process with a scope: tests/e2e/test_scope_fact_ids.py.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hippograph.domain.errors import InvalidInput, NotFound
from hippograph.domain.models import Fact
from hippograph.service.memory import Memory

UNKNOWN = "f_0123456789abcdef"
SECRET = "Falcon launch codes are kept in the blue vault"

# Every operation that takes a fact id, as (name, call(memory, id, other, scope)); ``other`` is a
# fact the caller sees, the second end of a link.
Op = Callable[[Memory, str, str, str | None], Any]
OPERATIONS: list[tuple[str, Op]] = [
    ("explain", lambda m, fid, other, scope: m.explain(fid, scope=scope)),
    ("confirm", lambda m, fid, other, scope: m.confirm(fid, scope=scope)),
    ("forget", lambda m, fid, other, scope: m.forget(fid, reason="asked", scope=scope)),
    ("purge", lambda m, fid, other, scope: m.forget(fid, purge=True, scope=scope)),
    ("mark_used", lambda m, fid, other, scope: m.mark_used([other, fid], scope=scope)),
    ("correct", lambda m, fid, other, scope: m.correct("The codes moved", fact_id=fid, scope=scope)),
    ("link from", lambda m, fid, other, scope: m.link(fid, other, "relates_to", scope=scope)),
    ("link to", lambda m, fid, other, scope: m.link(other, fid, "supersedes", scope=scope)),
]


def _refused(call: Callable[[], Any], fact_id: str) -> str:
    with pytest.raises(NotFound) as refused:
        call()
    return str(refused.value).replace(fact_id, "<id>")


def _state(memory: Memory, *fact_ids: str) -> tuple[list[Fact | None], dict[str, int], dict[str, str]]:
    """Everything an operation could have changed: the facts, the graph's counts, the index."""
    return (
        [memory.graph.get_fact(fid) for fid in fact_ids],
        memory.graph.census.counts(),
        memory.vectors.ids("facts"),
    )


@pytest.mark.parametrize(("caller", "seen"), [("project:hack", "project:hack"), (None, "global")])
def test_from_another_scope_every_fact_id_operation_is_not_found_and_changes_nothing(
    memory: Memory, caller: str | None, seen: str
) -> None:
    falcon = memory.remember(SECRET, scope="project:falcon", confidence=0.7).id
    other = memory.remember("Hack team lunch is on Thursday", scope=seen).id
    before = _state(memory, falcon, other)
    for name, op in OPERATIONS:
        hidden = _refused(lambda: op(memory, falcon, other, caller), falcon)  # noqa: B023
        never = _refused(lambda: op(memory, UNKNOWN, other, caller), UNKNOWN)  # noqa: B023
        assert hidden == never, name
        assert _state(memory, falcon, other) == before, name
    fact = memory.graph.get_fact(falcon)
    assert fact is not None and (fact.status.value, fact.confidence, fact.content) == ("staged", 0.7, SECRET)
    assert never.startswith(f"no fact has id <id> in {' or '.join(dict.fromkeys((seen, 'global')))}")


def test_from_its_own_scope_a_project_acts_on_its_facts_and_on_global_ones(memory: Memory) -> None:
    falcon = memory.remember("Falcon ships in May", scope="project:falcon").id
    office = memory.remember("The office closes in August").id
    assert memory.explain(falcon, scope="project:falcon").fact.id == falcon
    assert memory.confirm(office, scope="project:falcon").status == "confirmed"
    assert memory.mark_used([falcon, office], scope="project:falcon").facts[0].times_used == 1
    # A caller in global sees global facts, not a project's.
    assert memory.explain(office, scope="global").fact.id == office
    assert memory.forget(office).status == "retracted"
    corrected = memory.correct("Falcon ships in June", fact_id=falcon, scope="project:falcon")
    assert corrected.corrected == falcon and corrected.scope == "project:falcon"


def test_mark_used_of_one_hidden_fact_counts_none(memory: Memory) -> None:
    seen = memory.remember("Hack team lunch is on Thursday", scope="project:hack").id
    hidden = memory.remember(SECRET, scope="project:falcon").id
    with pytest.raises(NotFound):
        memory.mark_used([seen, hidden], scope="project:hack")
    assert memory.explain(seen, scope="project:hack").access_count == 0


def test_correct_by_query_does_not_find_another_scopes_fact(memory: Memory) -> None:
    falcon = memory.remember(SECRET, scope="project:falcon").id
    memory.remember("Hack team lunch is on Thursday", scope="project:hack")
    with pytest.raises((NotFound, InvalidInput)) as refused:
        memory.correct("The codes moved", query="launch codes blue vault", scope="project:hack")
    assert falcon not in str(refused.value) and SECRET not in str(refused.value)
    assert memory.explain(falcon, scope="project:falcon").fact.status == "staged"


def test_link_to_another_scopes_entity_is_not_found_as_an_unknown_one(memory: Memory) -> None:
    falcon = memory.remember("Falcon ships in May", scope="project:falcon", entities=["Falcon"])
    hack = memory.remember("Hack week is in June", scope="project:hack", entities=["Hackweek"])
    hidden, own = falcon.linked_entities[0].id, hack.linked_entities[0].id
    unknown = "e_0123456789abcdef"
    before = memory.graph.census.counts()
    for src, relation in ((hack.id, "about"), (own, "works_with")):
        seen = _refused(lambda: memory.link(src, hidden, relation, scope="project:hack"), hidden)  # noqa: B023
        never = _refused(lambda: memory.link(src, unknown, relation, scope="project:hack"), unknown)  # noqa: B023
        assert (
            seen
            == never
            == "no entity has id <id> in project:hack or global: take entity ids from "
            + ("remember's linked_entities, and pass the scope they were found in")
        )
    assert memory.graph.census.counts() == before
