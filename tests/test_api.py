"""The API is declared once (hippograph.api) and every layer follows that declaration."""

from __future__ import annotations

import inspect

import pytest

from hippograph.api import OPERATIONS, MemoryAPI
from hippograph.domain.errors import InvalidInput
from hippograph.service.memory import Memory


def test_the_service_implements_every_declared_operation_with_its_parameters(memory: Memory) -> None:
    for name, operation in OPERATIONS.items():
        handler = inspect.signature(memory._handlers[name])
        declared = operation.signature
        # The same parameters with the same defaults (passed by name), no catch-all: a parameter
        # added to or renamed in the declaration fails here until the handler follows.
        assert {p.name: p.default for p in handler.parameters.values()} == {
            p.name: p.default for p in declared.parameters.values()
        }, name
        assert all(p.kind is not p.VAR_KEYWORD for p in handler.parameters.values()), name


def test_a_declared_method_runs_its_operation_through_call() -> None:
    seen: list[tuple[str, dict[str, object]]] = []

    class Recorder(MemoryAPI):
        def call(self, name: str, arguments: dict[str, object]) -> object:
            seen.append((name, arguments))
            return None

    Recorder().forget("f_0123456789abcdef")
    Recorder().search("tea", limit=3)
    assert seen[0] == (
        "forget",
        {"fact_id": "f_0123456789abcdef", "reason": None, "purge": False, "scope": None},
    )
    assert seen[1][0] == "search"
    assert seen[1][1]["limit"] == 3 and seen[1][1]["query"] == "tea" and seen[1][1]["known_at"] is None
    with pytest.raises(TypeError):
        Recorder().remember("x", bogus=1)  # type: ignore[call-arg]


def test_arguments_that_crossed_a_process_boundary_get_their_declared_types_back() -> None:
    maintain = OPERATIONS["maintain"]
    assert maintain.parse_arguments({"now": "2026-01-02T03:04:05+00:00"})["now"].year == 2026
    with pytest.raises(InvalidInput, match="bogus"):
        OPERATIONS["confirm"].parse_arguments({"fact_id": "f_1", "bogus": 1})


def test_internal_parameters_are_not_offered_to_mcp_clients() -> None:
    assert "limit" in OPERATIONS["recall"].signature.parameters
    assert "limit" not in OPERATIONS["recall"].tool_signature.parameters
    assert "evidence" not in OPERATIONS["remember"].tool_signature.parameters
