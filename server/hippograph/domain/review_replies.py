"""What ``review`` answers: the items memory proposes its caller looks at, and what to do."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class ReviewKind(StrEnum):
    CONFLICT = "conflict"  # two active facts that disagree
    DUPLICATE = "duplicate"  # two active facts saying the same, or the same words on two days
    COMPARE = "compare"  # two active facts about the same in other words: reworded, or changed
    WEAK = "weak"  # a fact stated with little confidence, or about to turn dormant
    GAP = "gap"  # a question memory could not answer with confidence


class ReviewItem(BaseModel):
    kind: ReviewKind
    fact_ids: list[str] = Field(description="The facts concerned (none for a gap).")
    why: str
    suggested: str = Field(description="What the caller may do, with the user's say.")


class ReviewOut(BaseModel):
    items: list[ReviewItem]
