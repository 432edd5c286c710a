"""Bad input gets an answer in hippograph's words, names the argument, says what to send, and
writes nothing (issue 24, "Errors and coercions"): over MCP for tools, prompts and resources,
and in process where the service itself guards.

(A bad prompt request to a real stdio server: tests/e2e/test_bad_input.py.)"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from hippograph.api import OPERATIONS
from hippograph.domain.errors import InvalidInput
from hippograph.service.memory import Memory
from testkit.client import result_text

pytestmark = pytest.mark.anyio

PYDANTIC_WORDS = ("pydantic", "validation error", "Input should", "Field required", "Arguments\n")


def _state(memory: Memory) -> tuple[dict[str, Any], list[str]]:
    """What memory holds: counts, and every fact and edge as exported (status, confidence, text)."""
    return memory.graph.census.counts(), memory.export()["jsonl"].splitlines()[1:]


async def _refused(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, arguments, result.structured_content)
    return result_text(result)


# ------------------------------------------------------------ 1. a destructive boolean is strict


@pytest.mark.parametrize("sent", ["yes", "true", "false", 1, 0])
async def test_forget_refuses_a_purge_that_is_not_a_json_boolean(
    served: tuple[Client, Memory], sent: object
) -> None:
    client, memory = served
    fact = memory.remember("Ines grows figs in Faro").id
    before = _state(memory)
    message = await _refused(client, "forget", {"fact_id": fact, "purge": sent})
    assert "purge must be true or false (a JSON boolean), not " in message, message
    assert "send true or false" in message
    assert _state(memory) == before  # neither purged nor retracted
    assert memory.explain(fact).fact.content == "Ines grows figs in Faro"


async def test_the_service_and_the_owner_rpc_refuse_a_purge_that_is_not_a_boolean(memory: Memory) -> None:
    fact = memory.remember("Ines grows figs in Faro").id
    before = _state(memory)
    with pytest.raises(InvalidInput, match=r"purge must be true or false \(a JSON boolean\), got 'yes'"):
        memory.forget(fact, purge="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"forget: purge must be true or false .*: send true or false"):
        OPERATIONS["forget"].parse_arguments({"fact_id": fact, "purge": "yes"})
    assert _state(memory) == before


# ------------------------------------------------------------ 2. a scope that holds nothing yet


async def test_remember_into_an_empty_project_scope_notes_the_known_scopes(
    served: tuple[Client, Memory],
) -> None:
    client, memory = served
    await client.call_tool("remember", {"content": "Ines grows figs in Faro"})
    await client.call_tool("remember", {"content": "Falcon ships on Fridays", "scope": "project:falcon"})
    facts = memory.graph.census.counts()["facts"]

    typo = await client.call_tool("remember", {"content": "Falcon's CI is slow", "scope": "project:falcn"})
    assert not typo.is_error
    assert typo.structured_content is not None
    assert typo.structured_content["note"] == (
        "scope project:falcn held nothing before: this fact starts it; known scopes: global, project:falcon"
    )
    assert typo.structured_content["scope"] == "project:falcn"
    assert memory.graph.census.counts()["facts"] == facts + 1  # a new scope is legitimate: stored

    again = await client.call_tool(
        "remember", {"content": "Falcn builds run at night", "scope": "project:falcn"}
    )
    known = await client.call_tool("remember", {"content": "Falcon uses Postgres", "scope": "project:falcon"})
    plain = await client.call_tool("remember", {"content": "Ines likes dates"})
    session = await client.call_tool("remember", {"content": "we talked about figs", "scope": "session:s1"})
    for reply in (again, known, plain, session):
        assert reply.structured_content is not None and "note" not in reply.structured_content


async def test_search_and_recall_of_an_empty_scope_say_so(served: tuple[Client, Memory]) -> None:
    client, memory = served
    await client.call_tool("remember", {"content": "Falcon ships on Fridays", "scope": "project:falcon"})
    await client.call_tool("remember", {"content": "Ines grows figs in Faro"})
    before = _state(memory)
    note = "scope project:falcn holds nothing yet; known scopes: global, project:falcon"

    found = await client.call_tool("search", {"query": "when does Falcon ship", "scope": "project:falcn"})
    assert found.structured_content is not None
    assert note in found.structured_content["notes"]
    recalled = await client.call_tool("recall", {"context": "Falcon releases", "scope": "project:falcn"})
    assert recalled.structured_content is not None
    assert note in recalled.structured_content["notes"]
    assert _state(memory) == before  # a read starts nothing

    full = await client.call_tool("search", {"query": "when does Falcon ship", "scope": "project:falcon"})
    assert full.structured_content is not None and "notes" not in full.structured_content


# ------------------------------------------------------------ 3. missing and mistyped arguments


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        (
            "remember",
            {},
            "content is missing: send it. content: One natural-language statement, e.g. 'Alice prefers tea'",
        ),
        ("remember", {"content": 5}, "content must be text (a JSON string), not the number 5"),
        ("remember", {"content": None}, "content must be text (a JSON string), not null"),
        ("remember", {"content": "Ines likes tea", "tags": ["tea", 3]}, "tags[1] must be text"),
        ("remember", {"content": "Ines likes tea", "confidence": "high"}, "confidence must be a number"),
        ("search", {"query": "figs", "limit": "many"}, "limit must be a whole number, not the text 'many'"),
        ("search", {"query": "figs", "limit": 2.5}, "limit must be a whole number, not the number 2.5"),
        ("search", {"query": "figs", "kind": ["gossip"]}, "kind[0] 'gossip' is not known: use one of fact,"),
        ("search", {"query": "figs", "detail": {"a": 1}}, "detail must be true or false"),
        ("mark_used", {}, "fact_ids is missing: send it"),
    ],
)
async def test_missing_or_mistyped_arguments_are_explained_in_our_words(
    served: tuple[Client, Memory], tool: str, arguments: dict[str, Any], says: str
) -> None:
    client, memory = served
    before = _state(memory)
    message = await _refused(client, tool, arguments)
    assert says in message, message
    assert message.startswith(f"Error executing tool {tool}: ")
    assert "http" not in message and not any(word in message for word in PYDANTIC_WORDS), message
    assert _state(memory) == before


async def test_the_owner_rpc_explains_a_mistyped_argument_the_same_way() -> None:
    with pytest.raises(InvalidInput) as refused:
        OPERATIONS["search"].parse_arguments({"query": "figs", "limit": "many"})
    message = str(refused.value)
    assert message.startswith("search: limit must be a whole number, not the text 'many'. limit: How many")
    assert "http" not in message and not any(word in message for word in PYDANTIC_WORDS)


# ------------------------------------------------------------ 4. one value where a list is declared


async def test_a_single_value_where_a_list_is_declared_is_a_list_of_one(
    served: tuple[Client, Memory],
) -> None:
    client, _ = served
    stored = await client.call_tool(
        "remember",
        {
            "content": "Deploy Falcon with make ship",
            "kind": "procedure",
            "tags": "deploy",
            "entities": "Falcon",
        },
    )
    assert not stored.is_error, result_text(stored)
    assert stored.structured_content is not None
    assert stored.structured_content["tags"] == ["deploy"]
    assert "Falcon" in stored.structured_content["entities"]  # the name, not its letters
    assert all(len(name) > 1 for name in stored.structured_content["entities"])
    fact = stored.structured_content["id"]
    for filters in (
        {"kind": "procedure"},
        {"tags": "deploy"},
        {"status": "staged"},
        {"kind": ["procedure"]},
        {"kind": '["procedure"]'},  # a list sent as JSON text still reads as that list
    ):
        found = await client.call_tool("search", {"query": "how to deploy Falcon", **filters})
        assert not found.is_error, (filters, result_text(found))
        assert found.structured_content is not None
        assert [hit["id"] for hit in found.structured_content["results"]] == [fact], filters
    used = await client.call_tool("mark_used", {"fact_ids": fact})
    assert not used.is_error, result_text(used)


async def test_the_service_takes_a_single_tag_or_name_as_one(memory: Memory) -> None:
    stored = memory.remember("Deploy Falcon with make ship", tags="deploy", entities="Falcon")  # type: ignore[arg-type]
    assert stored.tags == ["deploy"]
    assert "Falcon" in stored.entities and all(len(name) > 1 for name in stored.entities)


# ------------------------------------------------------------ 5. query errors talk about queries


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("search", {"query": ""}, "the query is empty: send words or a question"),
        ("search", {"query": " \n\t "}, "the query is empty: send words or a question"),
        ("search", {"query": "fig " * 1250}, "the query is 4999 characters; send at most 2000"),
        ("search", {"query": "é" * 3000}, "the query is 3000 characters; send at most 2000"),
        ("recall", {"context": ""}, "the context is empty: send words or a question"),
        ("recall", {"context": "x" * 2001}, "the context is 2001 characters; send at most 2000"),
        ("search", {"query": "figs", "entity": " "}, "entity is empty: send a non-empty value"),
        (
            "link",
            {"from_id": "e_0123456789abcdef", "to_id": "e_fedcba9876543210", "relation": ""},
            "relation is empty: send a non-empty value",
        ),
    ],
)
async def test_query_errors_talk_about_queries(
    served: tuple[Client, Memory], tool: str, arguments: dict[str, Any], says: str
) -> None:
    client, _ = served
    message = await _refused(client, tool, arguments)
    assert says in message, message
    assert "fact" not in message and "split" not in message and "bytes" not in message, message


# ------------------------------------------------------------ 6. link's weight is called weight


@pytest.mark.parametrize(
    ("weight", "says"), [(3, "weight 3.0 is outside 0..1"), (-0.5, "weight -0.5 is outside")]
)
async def test_a_bad_link_weight_is_named_weight(
    served: tuple[Client, Memory], weight: float, says: str
) -> None:
    client, memory = served
    a = memory.remember("Falcon's build broke").id
    b = memory.remember("Falcon's release slipped").id
    before = _state(memory)
    message = await _refused(
        client, "link", {"from_id": a, "to_id": b, "relation": "causes", "weight": weight}
    )
    assert says in message and "send a number from 0 (weak) to 1 (strong" in message, message
    assert "confidence" not in message
    assert _state(memory) == before


async def test_a_predicate_between_a_fact_and_an_entity_is_refused_not_stored_as_about(
    served: tuple[Client, Memory],
) -> None:
    client, memory = served
    fact = memory.remember("Tove moved the build server to the Oslo rack").id
    entity = memory.remember("Tove works at Norlys").linked_entities[0].id
    before = _state(memory)
    message = await _refused(client, "link", {"from_id": fact, "to_id": entity, "relation": "works_at"})
    assert "relation 'works_at' cannot join a fact and an entity: send 'about'" in message, message
    assert _state(memory) == before
    assert memory.link(fact, entity, "about").edge_type == "ABOUT"


# ------------------------------------------------------------ 7. an unknown source lists the sources


async def test_an_unknown_source_says_which_sources_exist(served: tuple[Client, Memory]) -> None:
    client, memory = served
    before = _state(memory)
    message = await _refused(client, "remember", {"content": "Ines likes tea", "source": "user"})
    assert "source 'user' is not known: use one of user_edit (what the user said directly), " in message
    for source in ("conversation", "file", "system", "import"):
        assert f"{source} (" in message, source
    with pytest.raises(
        InvalidInput, match=r"source 'user' is not known: use one of user_edit \(what the user"
    ):
        memory.remember("Ines likes tea", source="user")
    assert _state(memory) == before


# ------------------------------------------------------------ 8. a long bad value is quoted short


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("remember", {"content": "Ines likes tea", "tags": ["bad tag!" * 625]}, "tag 'bad tag!bad"),
        ("remember", {"content": "Ines likes tea", "scope": "project:" + "x!" * 2500}, "scope 'project:x!x!"),
        ("remember", {"content": "Ines likes tea", "source": "u" * 5000}, "source 'uuuu"),
        ("search", {"query": "figs", "kind": ["k" * 5000]}, "kind[0] 'kkkk"),
        ("explain", {"fact_id": "f_" + "0" * 5000}, "fact_id 'f_0000"),
        (
            "link",
            {"from_id": "e_" + "1" * 5000, "to_id": "e_0123456789abcdef", "relation": "x"},
            "from_id 'e_111",
        ),
    ],
)
async def test_a_long_bad_value_is_never_echoed_whole(
    served: tuple[Client, Memory], tool: str, arguments: dict[str, Any], says: str
) -> None:
    client, memory = served
    before = _state(memory)
    message = await _refused(client, tool, arguments)
    assert says in message, message
    quoted = message[message.index("'") : message.index("…'") + 2]
    assert len(quoted) <= 62, quoted  # 60 characters and its quotes
    assert len(message) < 1000, len(message)
    assert _state(memory) == before


# ------------------------------------------------------------ 9. prompts/get: invalid params, no traceback


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("what_do_you_know", {}, "prompt what_do_you_know needs the argument topic (A person, project"),
        (
            "what_do_you_kno",
            {"topic": "Ines"},
            "there is no prompt 'what_do_you_kno': use one of what_do_you_know",
        ),
        (
            "what_do_you_know",
            {"topic": "Ines", "about": "x"},
            "takes no argument 'about': it takes only topic",
        ),
    ],
)
async def test_a_bad_prompt_request_is_invalid_params_without_a_traceback(
    served: tuple[Client, Memory],
    caplog: pytest.LogCaptureFixture,
    name: str,
    arguments: dict[str, str],
    says: str,
) -> None:
    client, _ = served
    with caplog.at_level(logging.INFO), pytest.raises(MCPError) as refused:
        await client.get_prompt(name, arguments)
    assert refused.value.error.code == INVALID_PARAMS
    assert says in refused.value.error.message, refused.value.error.message
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


# ------------------------------------------------------------ 10. resource reads the request got wrong


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        (
            "memory://entity/Nobody",
            "no entity is called 'Nobody' in this scope: search(query='Nobody') finds",
        ),
        ("memory://entity/%20", "entity is empty: send a non-empty value"),
        ("memory://topic/t_nope", "no topic 't_nope' in global: read memory://topics"),
        ("memory://entity/Ines?scope=bad!", "scope 'bad!' is not valid"),
        ("memory://context/figs?scope=bad!", "scope 'bad!' is not valid"),
        ("memory://context/%20", "the context is empty"),
    ],
)
async def test_a_resource_read_the_request_got_wrong_is_invalid_params(
    served: tuple[Client, Memory], caplog: pytest.LogCaptureFixture, uri: str, says: str
) -> None:
    client, memory = served
    memory.remember("Ines grows figs in Faro", entities=["Ines"])
    with caplog.at_level(logging.INFO), pytest.raises(MCPError) as refused:
        await client.read_resource(uri)
    assert refused.value.error.code == INVALID_PARAMS, refused.value.error
    assert says in refused.value.error.message, refused.value.error.message
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"scope": 123}, "scope 123 is not valid: use 'global', 'project:NAME' or 'session:ID'"),
        ({"session_id": 123}, "session_id 123 is not valid: use up to 128 letters, digits"),
    ],
    ids=["scope", "session-id"],
)
def test_the_service_refuses_a_scope_or_session_id_that_is_not_text(
    memory: Memory, arguments: dict[str, Any], message: str
) -> None:
    before = _state(memory)
    with pytest.raises(InvalidInput, match=message):
        memory.remember("Ines grows figs in Faro", **arguments)
    assert _state(memory) == before


async def test_a_failure_inside_hippograph_says_so_and_what_to_do_without_its_text(
    served: tuple[Client, Memory], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A fault of the server or an engine, not of the call: not the SDK's bare "Error executing
    # tool", nor the exception's own text (it may quote stored content).
    client, _ = served

    def fail(*_: object, **__: object) -> None:
        raise RuntimeError("Buffer manager exception: the pool is full (Ines grows figs)")

    monkeypatch.setattr(Memory, "remember", fail)
    monkeypatch.setattr(Memory, "search", fail)
    with caplog.at_level(logging.ERROR, logger="hippograph.mcp_app"):
        wrote = await _refused(client, "remember", {"content": "Ines grows figs in Faro"})
        read = await _refused(client, "search", {"query": "figs"})
    for message, tool in ((wrote, "remember"), (read, "search")):
        assert f"{tool} failed inside hippograph (RuntimeError), not because of its arguments" in message
        assert "hippograph doctor" in message and "figs" not in message
    assert "search for it before sending it again" in wrote
    assert "Try once more" in read
    assert "Buffer manager exception" in caplog.text  # the log keeps the details
