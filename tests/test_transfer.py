"""Export and import: hippograph's own JSONL round trip, and the MCP memory server's memory.jsonl."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hippograph.config import Settings
from hippograph.domain.errors import InvalidInput, SecretDetected
from hippograph.service.import_mcp import import_mcp_memory
from hippograph.service.memory import Memory
from hippograph.service.transfer import export, import_hippograph
from hippograph.store.embed import FastEmbedder
from testkit.prebuilt import Prebuilt

DATA = Path(__file__).parent / "data" / "transfer"


@pytest.fixture
def other(
    settings_for: Callable[[Path], Settings], embedder: FastEmbedder, tmp_path: Path, empty_store: Path
) -> Iterator[Memory]:
    """A second, empty store in its own data dir."""
    shutil.copytree(empty_store, tmp_path / "other")
    mem = Memory.open(settings_for(tmp_path / "other"), embedder=embedder)
    yield mem
    mem.close()


def _export(memory: Memory) -> str:
    out = io.StringIO()
    export(memory.stores, out)
    return out.getvalue()


def _counts(memory: Memory) -> dict[str, int]:
    return {**memory.graph.census.counts(), "indexed": memory.vectors.count("facts")}


def _fill(memory: Memory) -> dict[str, str]:
    """A store with every kind of thing export must carry; returns the ids the tests look at."""
    berlin = memory.remember(
        "Alice lives in Berlin", subject="Alice", predicate="lives_in", object="Berlin", tags=["home"]
    )
    paris = memory.correct("Alice lives in Paris", fact_id=berlin.id, object="Paris")
    lyon = memory.correct("Alice lives in Lyon", fact_id=paris.id, object="Lyon")
    tea = memory.remember(
        "Alice prefers green tea over coffee", kind="preference", entities=["Alice"], tags=["drinks"]
    )
    memory.confirm(tea.id)
    deploy = memory.remember(
        "To deploy Project Apollo, run make release and tag the commit",
        kind="procedure",
        entities=["Project Apollo"],
        tags=["ops", "release"],
    )
    postgres = memory.remember(
        "We decided Project Apollo uses PostgreSQL",
        kind="decision",
        subject="Project Apollo",
        predicate="uses",
        object="PostgreSQL",
        entities=["PostgreSQL"],
        event_time="2024-03-04",
        evidence="architecture review",
    )
    phone = memory.remember("Alice's old desk phone extension was 4412")
    memory.forget(phone.id, reason="no longer true")
    standup = [
        memory.remember(text, kind="episode", session_id="standup-1")
        for text in (
            "Standup: the release is blocked on the schema migration",
            "Standup: Bob will pair with Alice on the migration",
            "Standup: release moved to Thursday",
        )
    ]
    memory.link(postgres.id, deploy.id, "causes", 0.7)
    memory.mark_used([tea.id])  # use counts and last_accessed must travel too
    return {
        "berlin": berlin.id,
        "paris": paris.id,
        "lyon": lyon.id,
        "tea": tea.id,
        "phone": phone.id,
        "standup_last": standup[-1].id,
    }


PREBUILT = {"filled": _fill}  # conftest: the memory of a test asking for filled


@pytest.fixture
def filled(memory: Memory, prebuilt: Prebuilt) -> dict[str, str]:
    """The ids the tests look at in ``memory``, a copy of the memory ``_fill`` wrote."""
    ids: dict[str, str] = prebuilt(_fill)[1]
    return ids


def test_export_then_import_rebuilds_the_store_exactly(
    memory: Memory, filled: dict[str, str], other: Memory
) -> None:
    ids = filled
    first = _export(memory)

    report = import_hippograph(other.stores, other.upkeep, first.splitlines())
    second = _export(other)

    header1, *body1 = first.splitlines()
    header2, *body2 = second.splitlines()
    assert body1 == body2
    assert {**json.loads(header1), "exported_at": None} == {**json.loads(header2), "exported_at": None}
    kinds = [json.loads(line)["type"] for line in body1]
    assert report.entities_added == kinds.count("entity") > 0
    assert report.facts_added == kinds.count("fact") == 10
    assert report.edges_added == kinds.count("edge")
    assert report.skipped_existing == 0
    assert _counts(other) == _counts(memory)

    hits = other.search("where does Alice live now").results
    assert hits[0].id == ids["lyon"]
    assert ids["tea"] in [h.id for h in other.search("does Alice drink tea or coffee").results[:3]]
    explained = other.explain(ids["lyon"])
    assert [(f.id, f.hops) for f in explained.supersedes] == [(ids["paris"], 1), (ids["berlin"], 2)]
    assert other.explain(ids["tea"]).pinned is True
    assert other.explain(ids["phone"]).fact.status == "retracted"
    # The session continues where the imported one ended.
    follow_up = other.remember("Standup: release shipped", kind="episode", session_id="standup-1")
    assert [e.other_id for e in other.explain(follow_up.id).edges if e.type == "NEXT"] == [
        ids["standup_last"]
    ]


def test_export_is_deterministic_and_records_every_fact_field(memory: Memory, filled: dict[str, str]) -> None:
    first, second = _export(memory), _export(memory)
    assert first.splitlines()[1:] == second.splitlines()[1:]
    header = json.loads(first.splitlines()[0])
    assert header["type"] == "hippograph" and header["version"] == 1 and header["exported_at"].endswith("Z")
    fact = next(json.loads(line) for line in first.splitlines() if '"type": "fact"' in line)
    assert set(fact) == {
        "type", "id", "content", "kind", "status", "confidence", "source", "provenance", "scope",
        "created_at", "valid_from", "valid_until", "event_time", "last_accessed", "access_count",
        "pinned", "ttl_policy", "expires_at", "subject", "predicate", "object", "tags", "session_id",
        "evidence", "status_reason", "believed_until", "prior_status", "corroborations", "sources",
        "last_stated",
    }  # fmt: skip
    edge_types = {json.loads(line).get("edge") for line in first.splitlines()}
    assert {"SUPERSEDES", "CAUSES", "NEXT", "ABOUT", "RELATES", "HAS_TAG"} <= edge_types


def test_importing_an_export_twice_adds_nothing_the_second_time(
    memory: Memory, filled: dict[str, str], other: Memory
) -> None:
    lines = _export(memory).splitlines()
    first = import_hippograph(other.stores, other.upkeep, lines)
    counts = _counts(other)

    again = import_hippograph(other.stores, other.upkeep, lines)

    assert (again.entities_added, again.facts_added, again.edges_added) == (0, 0, 0)
    assert again.skipped_existing == again.records == first.records
    assert _counts(other) == counts
    # Into the very store it came from: everything is already there.
    assert import_hippograph(memory.stores, memory.upkeep, lines).skipped_existing == first.records


def test_import_reports_progress_in_batches(memory: Memory, filled: dict[str, str], other: Memory) -> None:
    seen: list[int] = []
    report = import_hippograph(other.stores, other.upkeep, _export(memory).splitlines(), progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == report.records


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"type": "fact", "id": ', "not valid JSON"),
        ('{"type": "memo", "id": "f_0123456789abcdef"}', "type 'memo' is not known"),
        ("FACT_WITHOUT_CONTENT", "missing field(s) content"),
        ("FACT_WITH_BAD_KIND", "kind 'rumour' is not known"),
        ("FACT_WITH_BAD_TIME", "created_at 'last tuesday' is not an ISO 8601 time"),
        (
            '{"type": "edge", "edge": "CAUSES", "from": "f_0123456789abcdef", "to": "f_fedcba9876543210"}',
            "neither",
        ),
    ],
)
def test_a_bad_line_is_refused_by_number_and_nothing_is_written(
    memory: Memory, filled: dict[str, str], other: Memory, line: str, expected: str
) -> None:
    lines = _export(memory).splitlines()
    fact = json.loads(next(x for x in lines if '"type": "fact"' in x))
    broken = {
        "FACT_WITHOUT_CONTENT": {k: v for k, v in fact.items() if k != "content"},
        "FACT_WITH_BAD_KIND": {**fact, "kind": "rumour"},
        "FACT_WITH_BAD_TIME": {**fact, "created_at": "last tuesday"},
    }
    lines.insert(3, json.dumps(broken[line]) if line in broken else line)  # becomes line 4
    before = _counts(other)

    with pytest.raises(InvalidInput) as err:
        import_hippograph(other.stores, other.upkeep, lines)

    assert "line 4: " in str(err.value) and expected in str(err.value)
    assert "nothing was written" in str(err.value)
    assert _counts(other) == before


def test_an_export_from_before_record_time_imports_and_reads_its_history(
    memory: Memory, filled: dict[str, str], other: Memory
) -> None:
    ids = filled
    old_lines = []
    for line in _export(memory).splitlines():
        record = json.loads(line)
        if record.get("type") == "fact":  # schema v1 had neither field
            record.pop("believed_until")
            record.pop("prior_status")
        old_lines.append(json.dumps(record))
    import_hippograph(other.stores, other.upkeep, old_lines)
    berlin = other.graph.get_fact(ids["berlin"])
    assert berlin is not None and (berlin.believed_until, berlin.prior_status) == (None, None)
    # The history reads its end from valid_until, as v1 wrote it.
    lyon = other.graph.get_fact(ids["lyon"])
    assert lyon is not None
    for when, held in ((berlin.created_at, ids["berlin"]), (lyon.created_at, ids["lyon"])):
        found = other.search("where does Alice live", known_at=when.isoformat()).results
        homes = [(h.id, h.status) for h in found if h.id in (ids["berlin"], ids["paris"], ids["lyon"])]
        assert homes == [(held, "staged")]


def test_a_file_without_the_header_is_refused_with_a_hint(other: Memory) -> None:
    with pytest.raises(InvalidInput, match=r"line 1: not a hippograph export.*--format mcp-memory"):
        import_hippograph(other.stores, other.upkeep, (DATA / "mcp_memory.jsonl").read_text().splitlines())


def test_a_fact_holding_a_secret_is_refused_before_anything_is_written(memory: Memory, other: Memory) -> None:
    memory.remember("the deploy user is called ci-bot")
    lines = _export(memory).splitlines()
    at = next(i for i, x in enumerate(lines) if '"type": "fact"' in x)
    lines[at] = lines[at].replace("called ci-bot", "called ci-bot, key AKIAME61CVTPRRNCZQMH")
    with pytest.raises(SecretDetected, match=f"line {at + 1}: content contains") as err:
        other.import_lines(lines, "hippograph")
    assert "AKIAME61CVTPRRNCZQMH" not in str(err.value)
    assert other.graph.census.counts()["facts"] == 0


# ------------------------------------------------------------------ MCP memory server files


def _mcp_lines(name: str = "mcp_memory.jsonl") -> list[str]:
    return (DATA / name).read_text().splitlines()


def test_mcp_memory_file_becomes_entities_facts_and_relations(memory: Memory) -> None:
    report = import_mcp_memory(memory.stores, memory.upkeep, _mcp_lines())

    assert (report.entities_added, report.facts_added) == (7, 16 + 6)  # observations, relations
    maya = memory.entities.resolve("Maya_Chen", "global")
    sam = memory.entities.resolve("Sam Patel", "global")
    postgres = memory.entities.resolve("postgresql", "global")
    assert maya is not None and maya.type == "person"
    assert sam is not None and sam.type == "concept"  # named only by a relation
    assert postgres is not None and postgres.type == "tool"
    relations = {
        (e.src, e.dst, e.props["predicate"]) for e in memory.graph.census.all_edges() if e.type == "RELATES"
    }
    assert len(relations) == 6 and (maya.id, sam.id, "mentors") in relations

    # By meaning: no word of the question is in the observation.
    found = {h.content: h for h in memory.search("where is the company based").results[:3]}
    assert found["Northwind Labs: Headquarters are in Porto"].entities == ["Northwind Labs"]
    hit = memory.search("is Maya allergic to anything").results[0]
    assert hit.content == "Maya_Chen: Is allergic to shellfish" and hit.entities == ["Maya_Chen"]
    fact = memory.graph.get_fact(hit.id)
    assert fact is not None
    assert (fact.source.value, fact.provenance.value, fact.subject) == ("import", "extracted", "Maya_Chen")
    # An observation naming another entity is linked to it as a mention.
    chaired = memory.search("who chairs the weekly planning").results[0]
    assert chaired.content == "Weekly planning: Daniel Ortiz chairs it"
    assert set(chaired.entities) == {"Weekly planning", "Daniel Ortiz"}
    # A relation reads as a sentence about both its ends.
    mentors = memory.search("who does Maya mentor").results[0]
    assert mentors.content == "Maya_Chen mentors Sam Patel"
    assert set(mentors.entities) == {"Maya_Chen", "Sam Patel"}


def test_importing_an_mcp_memory_file_twice_adds_nothing(memory: Memory) -> None:
    first = import_mcp_memory(memory.stores, memory.upkeep, _mcp_lines())
    counts = _counts(memory)

    again = import_mcp_memory(memory.stores, memory.upkeep, _mcp_lines())

    assert (again.entities_added, again.facts_added, again.edges_added) == (0, 0, 0)
    assert again.skipped_existing == 7 + (16 + 6) + 6  # entities, facts, relation edges
    assert first.skipped_existing == 0
    assert _counts(memory) == counts


def test_mcp_memory_import_reuses_entities_memory_already_knows(memory: Memory) -> None:
    known = memory.remember("Maya Chen joined in 2021", entities=["maya chen"]).linked_entities[0]
    line = {
        "type": "entity",
        "name": "Maya Chen",
        "entityType": "person",
        "observations": ["Speaks Portuguese"],
    }

    report = import_mcp_memory(memory.stores, memory.upkeep, [json.dumps(line)])

    assert (report.entities_added, report.facts_added, report.skipped_existing) == (0, 1, 1)
    speaks = memory.search("which languages does Maya speak").results[0]
    assert speaks.content == "Maya Chen: Speaks Portuguese" and speaks.entities == ["maya chen"]
    maya = memory.entities.get(known.id)
    assert maya is not None and maya.mention_count == 2


def test_older_single_object_format_imports(memory: Memory) -> None:
    report = import_mcp_memory(memory.stores, memory.upkeep, _mcp_lines("mcp_memory_legacy.json"))
    # 4 observations and 1 relation: 4 + 2 ABOUT edges, 1 RELATES, and "Maintains the billing
    # service" mentions Billing service.
    assert (report.entities_added, report.facts_added, report.edges_added) == (2, 5, 8)
    on_call = memory.search("who is on call").results[0]
    assert on_call.content == "Priya Raman: Is on call the first week of every month"
    with (DATA / "mcp_memory_legacy.json").open(encoding="utf-8") as file:  # as the CLI passes it
        assert import_mcp_memory(memory.stores, memory.upkeep, file).facts_added == 0


def test_mcp_memory_bad_line_is_refused_by_number(memory: Memory) -> None:
    lines = _mcp_lines()
    lines[2] = '{"type":"relation","from":"Maya_Chen","relationType":"knows"}'
    lines.append('{"type":"observation","entityName":"Maya_Chen"}')
    with pytest.raises(InvalidInput) as err:
        import_mcp_memory(memory.stores, memory.upkeep, lines)
    message = str(err.value)
    assert "line 3: to must be a non-empty string" in message
    assert f"line {len(lines)}: type 'observation' is not known" in message
    assert memory.graph.census.counts() == {"facts": 0, "entities": 0, "edges": 0}


def test_mcp_memory_observation_holding_a_secret_is_refused(memory: Memory) -> None:
    line = json.dumps(
        {"type": "entity", "name": "CI", "entityType": "tool", "observations": ["token ghp_" + "a1B2" * 9]}
    )
    with pytest.raises(SecretDetected, match="line 1: observations\\[0\\] contains"):
        memory.import_lines([line], "mcp-memory")
    assert memory.graph.census.counts()["facts"] == 0


def test_an_old_style_mcp_memory_file_is_screened_and_masked_as_one_object(
    settings: Settings, embedder: FastEmbedder
) -> None:
    token = "ghp_" + "a1B2" * 9
    whole = {"entities": [{"name": "CI", "entityType": "tool", "observations": [f"token {token}"]}]}
    lines = json.dumps(whole, indent=2).splitlines()  # pretty-printed: no line parses alone
    memory = Memory.open(settings.model_copy(update={"secrets": "redact"}), embedder=embedder)
    try:
        memory.import_lines(lines, "mcp-memory")
        facts = list(memory.graph.all_facts())
    finally:
        memory.close()
    assert [f.content for f in facts] == ["CI: token [REDACTED:github-token]"]


def test_mcp_memory_observations_and_relations_are_facts_that_name_their_entities(memory: Memory) -> None:
    report = memory.import_lines(_mcp_lines("mcp_memory_alice.jsonl"), "mcp-memory")
    assert (report["entities_added"], report["facts_added"]) == (3, 7 + 2)

    def top(query: str, n: int) -> list[str]:
        return [hit.content for hit in memory.search(query).results[:n]]

    assert set(top("Where does Alice live?", 2)) == {"Alice: Lives in Lisbon", "Alice: Moved to Porto"}
    assert "Alice works at Acme" in top("Where does Alice work?", 2)
    works = memory.search("Where does Alice work?").results
    hit = next(h for h in works if h.content == "Alice works at Acme")
    assert set(hit.entities) == {"Alice", "Acme"}
    fact = memory.graph.get_fact(hit.id)
    assert fact is not None and (fact.subject, fact.predicate, fact.object) == ("Alice", "works_at", "Acme")
    # An observation that already names its entity is kept as written.
    assert top("what does Acme make", 1) == ["Acme makes industrial robots"]
