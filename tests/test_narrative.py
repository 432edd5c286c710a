"""The recall narrative: what it shows within a budget, and what it says when nothing fits."""

from __future__ import annotations

from hippograph.service.memory import Memory
from hippograph.text.narrative import NarrativeFact, build_narrative


def _fact(i: int, when: str | None) -> NarrativeFact:
    return NarrativeFact(
        f"f_{i:016x}", f"Ravi ran lap {i} of the park", "fact", "staged", ("Ravi",), when, ""
    )


def _words(line: str) -> int:
    return len(line.split()) + 1


def test_a_timeline_needs_two_dated_facts() -> None:
    one = build_narrative("Ravi", [_fact(1, "2024-03-01")], [], 1000, _words)
    assert "## Timeline" not in one.text and one.text.count("lap 1") == 1  # no repeat of the fact
    two = build_narrative("Ravi", [_fact(1, "2024-03-01"), _fact(2, "2024-03-02")], [], 1000, _words)
    assert "## Timeline\n- 2024-03-01: Ravi ran lap 1" in two.text


def test_a_budget_no_fact_fits_says_so_and_what_would_fit(memory: Memory) -> None:
    memory.remember("Pickle's vet is Hillside Vets in Dennistoun.")
    tight = memory.recall("What do we know about Pickle?", budget_tokens=60)
    assert tight.narrative == "" and tight.tokens <= 60
    [note] = tight.notes
    assert note.startswith("no fact fits budget_tokens=60: the best one needs about ")
    needs = int(note.rsplit(" ", 1)[1])
    enough = memory.recall("What do we know about Pickle?", budget_tokens=needs)
    assert "Hillside Vets" in enough.narrative and enough.tokens <= needs


def test_a_recalled_fact_another_denies_says_so_and_new_facts_carry_no_status(memory: Memory) -> None:
    eats = memory.remember("Sven eats meat.").id
    denies = memory.remember("Sven does not eat meat.").id
    text = memory.recall("what does Sven eat?").narrative
    assert f"- Sven eats meat. (contested by {denies}) [{eats}]" in text
    assert f"- Sven does not eat meat. (contested by {eats}) [{denies}]" in text
    assert "(staged)" not in text
