"""What the topic reads and ``consolidate`` answer (``memory://topics``, ``memory://topic/{id}``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TopicOut(BaseModel):
    id: str
    label: str = Field(description="2-4 words its facts share and other topics' do not.")
    size: int = Field(description="How many facts it holds.")
    entities: list[str] = Field(description="The names its facts mention most.")
    fact_ids: list[str] = Field(description="Its most central facts; memory://topic/{id} lists all.")
    first: str = Field(description="When its earliest fact happened, or was stored (ISO 8601, UTC).")
    last: str = Field(description="When its latest fact happened, or was stored (ISO 8601, UTC).")


class TopicsOut(BaseModel):
    topics: list[TopicOut] = Field(description="The most recently active topics first.")
    more: int = Field(default=0, description="Topics not listed: older ones.")


class TopicFact(BaseModel):
    id: str
    content: str


class TopicDetailOut(BaseModel):
    id: str
    label: str
    scope: str
    size: int
    entities: list[str]
    first: str
    last: str
    central: list[TopicFact] = Field(description="Its most central facts, with their content.")
    fact_ids: list[str] = Field(description="Every fact it holds, most central first.")


class ScopeConsolidated(BaseModel):
    scope: str
    facts: int = Field(description="Its active facts.")
    in_topics: int = Field(description="Of them, those in a topic.")
    topics: int
    added: int = Field(description="Topics new since the last consolidate.")
    changed: int = Field(description="Topics that kept their id and gained or lost facts.")
    removed: int = Field(description="Topics gone since the last consolidate.")


class ConsolidateOut(BaseModel):
    dry_run: bool
    scopes: list[ScopeConsolidated]
    seconds: float = Field(description="How long it took.")
