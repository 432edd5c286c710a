"""Topics: groups of one scope's facts that belong together, found as communities of a fact graph.

The graph's nodes are facts; its edges say two facts go together: each fact's nearest facts by
meaning (weighted by their cosine similarity), consecutive turns of a session, facts a caller
used together, and facts that name the same uncommon entity (``service/topic_graph.py`` finds
its communities). A topic holds ``MIN_TOPIC`` to ``MAX_TOPIC`` facts: something a reader takes
in at a glance however large the memory grows.

Derived structure only: consolidation proposes topics, it never changes a fact. A topic keeps
its id while most of its facts stay together (``stable_ids``), so a client's link to it holds
when a few facts are added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence

# Most facts a topic holds: a community bigger than this is split again.
MAX_TOPIC = 30
# Fewest facts that make a topic: fewer are left without one.
MIN_TOPIC = 3


def topic_id(members: Collection[str]) -> str:
    """A new topic's id: ``t_`` and 16 hex digits of its members' ids (the same members, the same id)."""
    digest = hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()
    return f"t_{digest[:16]}"


def stable_ids(groups: Sequence[Sequence[str]], old: Mapping[str, Collection[str]]) -> list[str]:
    """An id for each of ``groups``: that of the old topic (id -> its members) holding more than
    half of the group and more than half of whose members are in it, else a new one. Each old
    id goes to one group at most."""
    topic_of = {member: tid for tid, members in old.items() for member in members}
    ids: list[str] = []
    taken: set[str] = set()
    for group in groups:
        shared: dict[str, int] = {}
        for member in group:
            if member in topic_of:
                shared[topic_of[member]] = shared.get(topic_of[member], 0) + 1
        best = max(shared.items(), key=lambda kv: (kv[1], kv[0]), default=None)
        if best and best[0] not in taken and 2 * best[1] > len(group) and 2 * best[1] > len(old[best[0]]):
            ids.append(best[0])
        else:
            ids.append(topic_id(group))
        taken.add(ids[-1])
    return ids
