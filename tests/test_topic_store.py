"""The topic store's contract, kept by the embedded one (SQLite) and the PostgreSQL one alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hippograph.store.pg_topics import PgTopicTable
from hippograph.store.seam import TopicRow, TopicStore
from hippograph.store.topic_table import TopicTable


@pytest.fixture(params=["sqlite", "postgresql"])
def topics(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TopicStore]:
    store: TopicStore
    if request.param == "sqlite":
        store = TopicTable(tmp_path / "topics.sqlite")
    else:
        store = PgTopicTable(request.getfixturevalue("pg_db"))
    yield store
    store.close()


def _topic(tid: str, scope: str, first: str, last: str, central: list[str]) -> TopicRow:
    return TopicRow(tid, scope, "release, checklist", len(central), first, last, ["Priya"], central)


def _two_scopes(store: TopicStore) -> None:
    store.replace(
        "global",
        [_topic("t_a", "global", "2026-01-01", "2026-03-01", ["f1", "f2"]),
         _topic("t_b", "global", "2026-02-01", "2026-04-01", ["f3"])],
        {"t_a": ["f1", "f2"], "t_b": ["f3"]},
        [("f1", "f2", 0.91), ("f1", "f3", 0.80)],
    )  # fmt: skip
    store.replace(
        "project:x", [_topic("t_c", "project:x", "2026-01-05", "2026-01-06", ["f9"])], {"t_c": ["f9"]}
    )


def test_topics_are_listed_by_scope_the_most_recent_first(topics: TopicStore) -> None:
    _two_scopes(topics)
    assert [t.id for t in topics.topics(["global"], limit=10)] == ["t_b", "t_a"]
    assert topics.count(["global", "project:x"]) == 3
    assert topics.get("t_a") == _topic("t_a", "global", "2026-01-01", "2026-03-01", ["f1", "f2"])
    assert topics.get("t_none") is None
    assert topics.members("t_a") == ["f1", "f2"]
    assert topics.of_scope("global") == {"t_a": ["f1", "f2"], "t_b": ["f3"]}
    assert topics.topic_of(["f2", "f9", "f404"]) == {"f2": "t_a", "f9": "t_c"}
    assert topics.near_pairs(["global"], limit=1) == [("f1", "f2", pytest.approx(0.91))]
    assert topics.near_pairs(["project:x"], limit=5) == []


def test_replacing_a_scope_drops_its_old_topics_and_pairs_and_leaves_other_scopes(topics: TopicStore) -> None:
    _two_scopes(topics)
    topics.replace(
        "global", [_topic("t_d", "global", "2026-05-01", "2026-05-02", ["f3", "f1"])], {"t_d": ["f3", "f1"]}
    )
    assert [t.id for t in topics.topics(["global", "project:x"], limit=10)] == ["t_d", "t_c"]
    assert topics.topic_of(["f1", "f2", "f3"]) == {"f1": "t_d", "f3": "t_d"}
    assert topics.near_pairs(["global"], limit=5) == []


def test_a_joining_fact_goes_last_widens_the_span_and_joins_once(topics: TopicStore) -> None:
    _two_scopes(topics)
    topics.join([("f7", "t_a", "2026-06-01"), ("f7", "t_a", "2026-06-01"), ("f8", "t_a", "2025-12-01")])
    assert topics.members("t_a") == ["f1", "f2", "f7", "f8"]
    joined = topics.get("t_a")
    assert joined is not None
    assert (joined.size, joined.first, joined.last) == (4, "2025-12-01", "2026-06-01")


def test_a_dropped_fact_leaves_its_topic_its_pairs_and_the_central_list(topics: TopicStore) -> None:
    _two_scopes(topics)
    assert topics.drop(["f1", "f404"]) == {"t_a"}
    left = topics.get("t_a")
    assert left is not None
    assert (left.size, left.central) == (1, ["f2"])
    assert topics.members("t_a") == ["f2"]
    assert topics.near_pairs(["global"], limit=5) == []
    topics.describe("t_a", "checklist", ["Tomasz"])
    described = topics.get("t_a")
    assert described is not None
    assert (described.label, described.entities) == ("checklist", ["Tomasz"])


def test_meta_is_kept_and_overwritten(topics: TopicStore) -> None:
    assert topics.get_meta("built") is None
    topics.set_meta("built", "10")
    topics.set_meta("built", "12")
    assert topics.get_meta("built") == "12"
