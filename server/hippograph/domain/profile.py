"""The entity profile reply (``memory://entity/{name}``): an entity's facts and their connections."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ProfileFact(BaseModel):
    id: str
    content: str
    status: str
    time: str = Field(description="When it happened if known, else when it was stored (ISO 8601, UTC).")


class RelatedEntity(BaseModel):
    name: str
    facts: int = Field(description="How many of the profile's facts name both.")


class ProfileEvent(BaseModel):
    id: str = Field(description="A fact of `facts`.")
    time: str = Field(description="When it happened (ISO 8601, UTC).")


class ProfileChange(BaseModel):
    id: str = Field(description="A fact of `facts`: the value now.")
    replaces: str = Field(description="The content of the fact it superseded.")


class ProfileContest(BaseModel):
    id: str = Field(description="A fact of `facts`.")
    contested_by: list[str] = Field(description="Ids of active facts that contradict it.")


class ProfileSummary(BaseModel):
    id: str = Field(description="The summary fact (tagged summary): replace it with correct.")
    content: str
    time: str = Field(description="When it was stored (ISO 8601, UTC).")
    newer_facts: int = Field(description="Facts of the profile stored after it: what it does not cover.")


class EntityProfileOut(BaseModel):
    name: str
    type: str
    scope: str
    facts: list[ProfileFact] = Field(description="Its current facts, best first, as many as fit.")
    related: list[RelatedEntity] = Field(default_factory=list, description="Entities named with it.")
    timeline: list[ProfileEvent] = Field(default_factory=list, description="Its dated facts, oldest first.")
    changed: list[ProfileChange] = Field(default_factory=list, description="Values that replaced others.")
    contested: list[ProfileContest] = Field(default_factory=list)
    summary: ProfileSummary | None = Field(
        default=None,
        description="The newest fact about it tagged summary, written by a model (prompt summarize_entity).",
        exclude_if=lambda value: value is None,
    )
    tokens: int = Field(description="Tokens of this whole reply as sent (the embedding model's tokenizer).")
