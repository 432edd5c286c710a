"""Fact values for tests and benches: a staged conversation fact, any field overridden."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from hippograph.domain.models import Fact, FactKind, FactStatus, Provenance, Source

DEFAULT_AT = datetime(2024, 1, 1, tzinfo=UTC)


def make_fact(content: str = "Alice lives in Berlin", *, at: datetime = DEFAULT_AT, **fields: Any) -> Fact:
    """A fact stated at ``at`` (created and valid from then), with ``fields`` replacing the defaults."""
    base = Fact(
        id="f_0000000000000000",
        content=content,
        kind=FactKind.FACT,
        status=FactStatus.STAGED,
        confidence=0.8,
        source=Source.CONVERSATION,
        provenance=Provenance.OBSERVED,
        scope="global",
        created_at=at,
        valid_from=at,
    )
    return replace(base, **fields)
