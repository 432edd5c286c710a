"""The MCP resources: memory's context, statistics, entity profiles and topics, read as documents.

Each reads through ``api.MemoryAPI`` in the server's scope unless the URI names another; a
failed read is the client's own fault (invalid params) or the server's (internal error), saying
which (``_resource_error``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from hippograph.api import CONTEXT_QUERY, MemoryAPI
from hippograph.domain import replies
from hippograph.domain import validation as check
from hippograph.domain.errors import HippographError, InvalidInput, NotFound

ENTITY_TEMPLATE = "memory://entity/{name}{?scope}"


def add_resources(server: MCPServer[Any], memory: MemoryAPI, default_scope: str) -> None:
    """Register the resources on ``server``; ``default_scope`` is the scope a URI names none of."""

    @server.resource(
        "memory://context",
        name="context",
        title="Memory context",
        description="What memory holds that matters most right now, as a markdown narrative.",
        mime_type="text/markdown",
    )
    def context_resource() -> str:
        return _context()

    def _context(scope: str | None = None) -> str:
        narrative = memory.recall(CONTEXT_QUERY, scope=scope or default_scope).narrative
        return narrative or "_Memory is empty._"

    @server.resource(
        "memory://context{?scope}",
        name="context_of_scope",
        title="Memory context of a scope",
        description="What memory holds that matters most right now in a scope and global, e.g. "
        "memory://context?scope=project:apollo.",
        mime_type="text/markdown",
    )
    def context_of_scope(scope: str | None = None) -> str:
        with _as_resource_errors():
            return _context(scope)

    @server.resource(
        "memory://context/{query}{?scope}",
        name="context_for_query",
        title="Memory context for a query",
        description="The recall narrative for a query, from the server's scope (or the one named) and "
        "global, e.g. "
        "memory://context/Alice%27s%20travel or memory://context/deploy%20steps?scope=project:apollo.",
        mime_type="text/markdown",
    )
    def context_for_query(query: str, scope: str | None = None) -> str:
        with _as_resource_errors():
            return (
                memory.recall(unquote(query), scope=scope or default_scope).narrative
                or "_Nothing relevant in memory._"
            )

    @server.resource(
        "memory://stats",
        name="stats",
        title="Memory statistics",
        description="Counts of facts by kind, status and scope, entities, edges, disk use.",
        mime_type="application/json",
    )
    def stats_resource() -> str:
        return json.dumps(memory.stats(), default=str)

    @server.resource(
        ENTITY_TEMPLATE,
        name="entity",
        title="Entity profile",
        description="JSON profile of one entity (person, project, ...) in the server's scope (or the one "
        "named) and global: facts (best first, within ~800 tokens), related entities, timeline, changed "
        "values, contested facts; e.g. memory://entity/Alice or memory://entity/Falcon?scope=project:falcon.",
        mime_type="application/json",
    )
    def entity_resource(name: str, scope: str | None = None) -> str:
        try:
            profile = memory.profile(unquote(name), scope=scope or default_scope)
        except NotFound as err:
            raise ResourceNotFoundError(
                f"{err}; an entity of a project or session scope is read with "
                f"memory://entity/{check.shown(name)[1:-1]}?scope=<its scope>"
            ) from err
        except HippographError as err:
            raise _resource_error(err) from err
        return replies.text(profile)

    @server.resource(
        "memory://topics{?scope}",
        name="topics",
        title="Topics",
        description="JSON: the topics memory found in the server's scope (or the one named) and global, "
        "the most recently active first: id, label, size, entities, most central fact ids, first, last. "
        "hippograph consolidate finds them again; e.g. memory://topics?scope=project:falcon.",
        mime_type="application/json",
    )
    def topics_resource(scope: str | None = None) -> str:
        with _as_resource_errors():
            return replies.text(memory.topics(scope=scope or default_scope))

    @server.resource(
        "memory://topic/{topic_id}{?scope}",
        name="topic",
        title="Topic",
        description="JSON: one topic of memory://topics: every fact id it holds, the most central with "
        "content; e.g. memory://topic/t_0123456789abcdef.",
        mime_type="application/json",
    )
    def topic_resource(topic_id: str, scope: str | None = None) -> str:
        with _as_resource_errors():
            return replies.text(memory.topic(unquote(topic_id), scope=scope or default_scope))


@contextmanager
def _as_resource_errors() -> Iterator[None]:
    """A read's anticipated failures as the client gets them (``_resource_error``)."""
    try:
        yield
    except HippographError as err:
        raise _resource_error(err) from err


def _resource_error(err: HippographError) -> Exception:
    """A failed resource read as the client gets it: the request's own fault (an unknown entity, a
    bad scope or query) is invalid params (-32602), the spec's code for a resource not found too;
    only the server's own failure (a store error) stays an internal error (-32603)."""
    if isinstance(err, NotFound):
        return ResourceNotFoundError(str(err))
    if isinstance(err, InvalidInput):
        return MCPError(INVALID_PARAMS, str(err))
    return ResourceError(str(err))
