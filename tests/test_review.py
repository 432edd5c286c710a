"""review (issue 26): conflicts, likely duplicates, weak facts and gaps, read-only, per scope."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from hippograph.domain.errors import InvalidInput
from hippograph.service.memory import Memory
from testkit.stored import stored_files

pytestmark = pytest.mark.anyio


def _kinds(memory: Memory, **arguments: Any) -> dict[str, list[list[str]]]:
    found: dict[str, list[list[str]]] = {}
    for item in memory.review(**arguments).items:
        found.setdefault(item.kind.value, []).append(item.fact_ids)
    return found


def test_other_words_and_one_changed_slot_are_pairs_to_compare_not_duplicates_or_conflicts(
    memory: Memory,
) -> None:
    studies = memory.remember("Mira studies Portuguese in the evenings.").id
    learning = memory.remember("In the evenings Mira is learning Portuguese.").id
    green = memory.remember("Arjun's bike is green.").id
    orange = memory.remember("Arjun's bike is orange.").id
    called = memory.remember("Tilde's cat is called Moss.").id
    named = memory.remember("Tilde's cat is named Moss.").id
    memory.consolidate()  # near pairs are what consolidation saw
    found = _kinds(memory)
    assert sorted(found["compare"]) == sorted([[studies, learning], [green, orange], [called, named]])
    assert "duplicate" not in found and "conflict" not in found
    why = {tuple(i.fact_ids): i.why for i in memory.review().items}
    assert why[green, orange] == 'one slot differs, "green" then "orange": reworded, or a changed value?'
    assert why[studies, learning].startswith("other words about the same: reworded, or a changed value?")


def test_a_changed_number_is_a_conflict_and_another_holder_no_pair(memory: Memory) -> None:
    rent = memory.remember("The rent for the studio is 900 euros a month.").id
    raised = memory.remember("The rent for the studio is 950 euros a month.").id
    memory.remember("Ken lives in Osaka with his partner.")
    memory.remember("Yuki lives in Osaka with his partner.")
    memory.consolidate()
    assert _kinds(memory) == {"conflict": [[rent, raised]]}


def test_the_same_words_on_two_days_are_a_duplicate_to_decide(memory: Memory) -> None:
    first = memory.remember("Our landlord is Fraser Doig.", event_time="2026-09-01").id
    again = memory.remember("Our landlord is Fraser Doig.", event_time="2026-10-01").id
    memory.consolidate()
    [item] = memory.review(kinds=["duplicate"]).items
    assert item.fact_ids == [first, again]
    assert item.why == "the same words dated on two days: one fact, or two events? (similarity 1.00)"


def test_a_denial_is_a_conflict_and_a_forgotten_fact_leaves_the_queue(memory: Memory) -> None:
    eats = memory.remember("Sven eats meat.").id
    denies = memory.remember("Sven does not eat meat.").id
    assert _kinds(memory, kinds=["conflict"]) == {"conflict": [[eats, denies]]}
    memory.forget(eats)
    assert _kinds(memory, kinds=["conflict"]) == {}


def test_an_unsure_fact_is_weak_and_a_confirmed_one_is_not(memory: Memory) -> None:
    unsure = memory.remember("Kofi might prefer window seats.", confidence=0.3).id
    memory.remember("Kofi flies to Accra every spring.")
    assert _kinds(memory, kinds=["weak"]) == {"weak": [[unsure]]}
    memory.confirm(unsure)
    assert _kinds(memory, kinds=["weak"]) == {}


def test_a_question_without_a_confident_match_is_a_gap_of_its_scope_never_one_with_a_secret(
    memory: Memory,
) -> None:
    memory.remember("The office plants are watered on Mondays.", scope="project:office")
    asked = "Which bank handles our payroll?"
    for _ in range(2):
        assert memory.search(asked, scope="project:office").notes  # no confident match
    memory.recall(asked.upper(), scope="project:office")
    memory.search("Is ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ12 still our token?", scope="project:office")
    [gap] = memory.review(scope="project:office", kinds=["gap"]).items
    assert gap.fact_ids == [] and "asked 3x" in gap.why and asked.upper() in gap.why
    assert memory.review(scope="project:other", kinds=["gap"]).items == []
    assert not [path for path in stored_files(memory.settings) if b"ghp_" in path.read_bytes()]


def test_a_purge_empties_the_gaps(memory: Memory) -> None:
    fact = memory.remember("The office plants are watered on Mondays.").id
    memory.search("Which bank handles our payroll?")
    assert memory.review(kinds=["gap"]).items
    memory.forget(fact, purge=True)
    assert memory.review(kinds=["gap"]).items == []


def test_review_changes_nothing_and_refuses_an_unknown_kind(memory: Memory) -> None:
    memory.remember("Kofi might prefer window seats.", confidence=0.3)
    before = memory.export()["jsonl"].splitlines()[1:]
    memory.review()
    assert memory.export()["jsonl"].splitlines()[1:] == before
    with pytest.raises(InvalidInput, match="kinds"):
        memory.review(kinds=["typo"])


async def test_review_over_mcp_lists_items_with_why_and_what_to_do(client: Client) -> None:
    result = await client.call_tool(
        "remember", {"content": "Kofi might prefer window seats.", "confidence": 0.3}
    )
    assert not result.is_error
    reviewed = await client.call_tool("review", {"kinds": ["weak"], "limit": 5})
    assert not reviewed.is_error and reviewed.structured_content is not None
    [item] = reviewed.structured_content["items"]
    assert set(item) == {"kind", "fact_ids", "why", "suggested"} and item["kind"] == "weak"
    prompt = await client.get_prompt("tidy_memory", {})
    assert "review" in prompt.messages[0].content.text  # type: ignore[union-attr]


async def test_reading_the_context_resource_logs_no_gap(client: Client) -> None:
    # Memory's own standing question is no question of the user's to ask them about.
    await client.call_tool("remember", {"content": "The office plants are watered on Mondays."})
    await client.read_resource("memory://context")
    reviewed = await client.call_tool("review", {"kinds": ["gap"]})
    assert reviewed.structured_content == {"items": []}
    await client.call_tool("search", {"query": "Which bank handles our payroll?"})
    reviewed = await client.call_tool("review", {"kinds": ["gap"]})
    assert reviewed.structured_content is not None and len(reviewed.structured_content["items"]) == 1


def test_of_a_pair_that_may_say_the_same_the_users_correction_is_the_one_kept(memory: Memory) -> None:
    plain = memory.remember("In the evenings Mira is learning Portuguese.").id
    french = memory.remember("Mira studies French.").id
    fixed = memory.correct("Mira studies Portuguese in the evenings.", fact_id=french).id
    memory.consolidate()
    [item] = memory.review(kinds=["compare"]).items
    assert item.fact_ids == [plain, fixed]
    assert f"reworded, forget {plain} (reason: restates {fixed}); changed, forget {plain}" in item.suggested


def test_a_new_memorys_background_job_finds_its_near_pairs_from_its_first_facts(memory: Memory) -> None:
    rent = memory.remember("The rent for the studio is 900 euros a month.").id
    raised = memory.remember("The rent for the studio is 950 euros a month.").id
    memory.remember("Odile waters the plants on Sundays.")
    memory._consolidate_if_due()  # what the server's topics job runs every minute
    assert _kinds(memory, kinds=["conflict"]) == {"conflict": [[rent, raised]]}
