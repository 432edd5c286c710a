"""Topics: groups of one scope's facts that belong together, found as communities of a fact graph.

The graph's nodes are facts; its edges say two facts go together: each fact's nearest facts by
meaning (weighted by their cosine similarity), consecutive turns of a session, facts a caller
used together, and facts that name the same uncommon entity. Louvain (networkx, BSD) finds its
communities; a community larger than ``MAX_TOPIC`` is split again on its own subgraph, so a topic
stays something a reader takes in at a glance however large the memory grows (modularity alone
merges ever larger groups as the graph grows). A group under ``MIN_TOPIC`` facts is no topic.

Derived structure only: consolidation proposes topics, it never changes a fact. A topic keeps
its id while most of its facts stay together (``stable_ids``), so a client's link to it holds
when a few facts are added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping, Sequence

import networkx as nx

# Most facts a topic holds: a community bigger than this is split again.
MAX_TOPIC = 30
# Fewest facts that make a topic: fewer are left without one.
MIN_TOPIC = 3
# Louvain is randomised; a fixed seed makes the same graph give the same topics.
_SEED = 7
# A community that resolution 1 cannot split is asked again at twice the resolution, up to this.
_MAX_RESOLUTION = 64.0

Edge = tuple[str, str, float]


def communities(nodes: Sequence[str], edges: Iterable[Edge]) -> list[list[str]]:
    """The topics of a fact graph: groups of ``MIN_TOPIC`` to ``MAX_TOPIC`` node ids, each listed
    most central first (the greatest weight of edges inside the group), the groups in order of
    their most central member. Weights of repeated edges add up; loops are ignored."""
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    for a, b, weight in edges:
        if a == b or weight <= 0 or a not in graph or b not in graph:
            continue
        previous = graph.get_edge_data(a, b, {"weight": 0.0})["weight"]
        graph.add_edge(a, b, weight=previous + weight)
    groups: list[set[str]] = []
    for found in nx.community.louvain_communities(graph, weight="weight", seed=_SEED):
        groups += _split(graph, set(found))
    topics = [_by_centrality(graph, group) for group in groups if len(group) >= MIN_TOPIC]
    return sorted(topics, key=lambda members: members[0])


def _split(graph: nx.Graph, members: set[str]) -> list[set[str]]:
    if len(members) <= MAX_TOPIC:
        return [members]
    sub = graph.subgraph(members)
    resolution = 1.0
    while True:
        parts = nx.community.louvain_communities(sub, weight="weight", resolution=resolution, seed=_SEED)
        if len(parts) > 1 or resolution >= _MAX_RESOLUTION:
            break
        resolution *= 2
    if len(parts) == 1:  # no edges to cut (a clique of equals): cut it in order instead
        ordered = sorted(members)
        return [set(ordered[i : i + MAX_TOPIC]) for i in range(0, len(ordered), MAX_TOPIC)]
    return [piece for part in parts for piece in _split(graph, set(part))]


def _by_centrality(graph: nx.Graph, members: Collection[str]) -> list[str]:
    inside = graph.subgraph(members)
    strength = dict(inside.degree(weight="weight"))
    return sorted(members, key=lambda node: (-strength[node], node))


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
