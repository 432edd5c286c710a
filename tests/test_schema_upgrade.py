"""A data dir written by schema v1 opens, and v2 undoes what v1's lifecycle got wrong."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ladybug

from hippograph.config import Settings
from hippograph.domain.models import FactStatus
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.schema import kuzu_migrations

STATED = datetime(2025, 1, 10)
CORRECTED = datetime(2025, 3, 1)
DECAYED = datetime(2025, 6, 1)

V1_FACTS: list[dict[str, Any]] = [
    # Retracted by v1's decay: it vanished from every search.
    {"id": "f_000000000000000a", "content": "My dog is called Biscuit", "status": "retracted",
     "status_reason": "decayed", "valid_until": DECAYED, "access_count": 2, "last_accessed": STATED},
    # Promoted by v1 because three searches returned it.
    {"id": "f_000000000000000b", "content": "Rumour: the Lisbon office might close", "status": "confirmed",
     "status_reason": "promoted after 3 accesses", "confidence": 0.46, "access_count": 3},
    {"id": "f_000000000000000c", "content": "Maria's birthday is on 3 March", "status": "confirmed",
     "status_reason": "confirmed by user", "pinned": True, "confidence": 1.0, "access_count": 9},
    # v1 closed a corrected fact's valid_until at the time of the correction.
    {"id": "f_000000000000000d", "content": "The offsite is in Porto", "status": "superseded",
     "status_reason": "corrected by f_000000000000000e", "valid_until": CORRECTED},
    {"id": "f_000000000000000e", "content": "The offsite is in Lisbon", "created_at": CORRECTED},
    {"id": "f_000000000000000f", "content": "The old wifi hint was the cat's name", "status": "retracted",
     "status_reason": "user asked", "valid_until": DECAYED},
]  # fmt: skip


def _v1_data_dir(data_dir: Path) -> None:
    """A graph as hippograph wrote it at schema v1 (no vector index yet: it is rebuilt)."""
    data_dir.mkdir(parents=True)
    db = ladybug.Database(str(data_dir / "graph.kuzu"))
    conn = ladybug.Connection(db)
    for statement in kuzu_migrations()[0].statements:
        conn.execute(statement)
    conn.execute("CREATE (:Meta {key: 'schema_version', value: '1'})")
    for given in V1_FACTS:
        row: dict[str, Any] = {
            "kind": "fact", "status": "staged", "confidence": 0.8, "source": "conversation",
            "provenance": "observed", "scope": "global", "created_at": STATED, "valid_until": None,
            "last_accessed": None, "access_count": 0, "pinned": False, "status_reason": None, **given,
        }  # fmt: skip
        row["valid_from"] = row["created_at"]
        conn.execute(
            "CREATE (:Fact {id: $id, content: $content, kind: $kind, status: $status, "
            "confidence: $confidence, source: $source, provenance: $provenance, scope: $scope, "
            "created_at: $created_at, valid_from: $valid_from, valid_until: $valid_until, "
            "last_accessed: $last_accessed, access_count: $access_count, pinned: $pinned, "
            "ttl_policy: 'decay', tags: CAST([] AS STRING[]), status_reason: $status_reason})",
            row,
        )
    conn.execute(
        "MATCH (a:Fact {id: 'f_000000000000000e'}), (b:Fact {id: 'f_000000000000000d'}) "
        "CREATE (a)-[:SUPERSEDES {reason: 'corrected', created_at: $at}]->(b)",
        {"at": CORRECTED},
    )
    conn.close()
    db.close()


def test_a_v1_data_dir_gets_back_what_decay_took_and_loses_what_searches_gave(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = tmp_path / "data"
    _v1_data_dir(data_dir)
    memory = Memory.open(Settings(data_dir=data_dir, models_dir=models_dir), embedder=embedder)
    try:
        assert memory.stats()["schema_version"] == 7
        facts = memory.graph.get_facts([f["id"] for f in V1_FACTS])
        dog, rumour, birthday, porto, lisbon, wifi = (facts[f["id"]] for f in V1_FACTS)

        assert (dog.status, dog.valid_until, dog.believed_until) == (FactStatus.DORMANT, None, None)
        assert dog.id in [h.id for h in memory.search("what is my dog called", limit=3).results]
        assert (rumour.status, rumour.access_count, rumour.pinned) == (FactStatus.STAGED, 0, False)
        assert (birthday.status, birthday.pinned, birthday.access_count) == (FactStatus.CONFIRMED, True, 0)
        assert lisbon.status is FactStatus.STAGED

        at = CORRECTED.replace(tzinfo=UTC)
        assert (porto.status, porto.believed_until, porto.prior_status) == (
            FactStatus.SUPERSEDED,
            at,
            FactStatus.STAGED,
        )
        then = {h.id: h.status for h in memory.search("where is the offsite", known_at="2025-02-01").results}
        assert (then.get(porto.id), lisbon.id in then) == ("staged", False)
        hint = memory.search("the old wifi hint", known_at="2025-02-01").results
        assert {h.id: h.status for h in hint}.get(wifi.id) == "staged"  # forgotten later, in May
        assert (wifi.status, wifi.believed_until) == (FactStatus.RETRACTED, DECAYED.replace(tzinfo=UTC))
        assert wifi.id not in [h.id for h in memory.search("wifi hint").results]
        # The vector index was rebuilt with the statuses v2 gave.
        assert memory.doctor()["statuses_fixed"] == 0
        # A v2 write keeps the new columns.
        memory.graph.update_fact_state(replace(porto, prior_status=FactStatus.CONFIRMED))
        assert memory.graph.get_fact(porto.id).prior_status is FactStatus.CONFIRMED  # type: ignore[union-attr]
    finally:
        memory.close()
