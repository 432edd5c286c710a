"""MCP wiring only: tools, resources and transports over an open ``Memory``.

A tool validates nothing itself: it calls the service and shapes the reply. Anticipated
failures (``HippographError``) become tool errors whose message the model can act on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations
from pydantic import Field

from hippograph import __version__
from hippograph.config import Settings
from hippograph.errors import HippographError
from hippograph.memory import Memory
from hippograph.models import RememberOut, SearchOut

P = ParamSpec("P")
R = TypeVar("R")

INSTRUCTIONS = """\
hippograph is your long-term memory about the user and their work, kept across conversations.
- At the start of a task, search (or recall) what you already know about its people, projects, preferences.
- Remember durable things as you learn them: one statement per call ("Alice prefers tea over coffee"),
  with subject/predicate/object when the fact has that shape, and the entities it is about.
- Do not store secrets (keys, tokens, passwords): they are refused.
- Each result carries a fact id; use it to correct, confirm, explain or forget that fact instead of
  storing a duplicate.
"""

Kind = Literal["fact", "preference", "procedure", "decision", "correction", "negative", "episode"]
SourceName = Literal["user_edit", "file", "system", "conversation", "import"]


def _tool_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn our anticipated failures into tool errors the model sees verbatim."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except HippographError as err:
            raise ToolError(str(err)) from err

    return wrapper


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection: only loopback Host/Origin headers unless bound elsewhere."""
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    if settings.host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        hosts.append(settings.host)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + hosts,
        allowed_origins=[f"http://{h}:*" for h in hosts] + [f"http://{h}" for h in hosts],
    )


def build_server(memory: Memory) -> MCPServer:
    server: MCPServer = MCPServer(
        name="hippograph",
        title="hippograph memory",
        version=__version__,
        instructions=INSTRUCTIONS,
    )

    @server.tool(
        title="Remember a fact",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    @_tool_errors
    def remember(
        content: Annotated[
            str, Field(description="One natural-language statement, e.g. 'Alice prefers tea'.")
        ],
        kind: Annotated[Kind | None, Field(description="What sort of memory this is (default fact).")] = None,
        tags: Annotated[list[str] | None, Field(description="Short labels, e.g. ['diet', 'work'].")] = None,
        entities: Annotated[
            list[str] | None,
            Field(description="Names of people, projects, places or things the fact is about."),
        ] = None,
        subject: Annotated[str | None, Field(description="Entity the fact is about, e.g. 'Alice'.")] = None,
        predicate: Annotated[str | None, Field(description="Relation, e.g. 'lives_in', 'prefers'.")] = None,
        object: Annotated[str | None, Field(description="Value or entity, e.g. 'Berlin'.")] = None,
        confidence: Annotated[
            float | None, Field(description="0 (unsure) to 1 (certain); default 0.8.")
        ] = None,
        source: Annotated[
            SourceName | None,
            Field(description="Where it came from: user_edit if the user said it directly."),
        ] = None,
        scope: Annotated[
            str | None, Field(description="'global' (default), 'project:NAME' or 'session:ID'.")
        ] = None,
        event_time: Annotated[
            str | None, Field(description="When it happened, ISO 8601 (e.g. 2024-05-08), if known.")
        ] = None,
        session_id: Annotated[
            str | None, Field(description="Conversation id: facts of one session are linked in order.")
        ] = None,
    ) -> RememberOut:
        """Store one durable fact, preference, decision or procedure in long-term memory.

        Use it when you learn something worth knowing in a later conversation. Known entities
        named in the content are linked automatically. Example:
        remember(content="Alice moved to Berlin in May 2024", subject="Alice", predicate="lives_in",
                 object="Berlin", entities=["Alice", "Berlin"], event_time="2024-05-01")
        """
        return memory.remember(
            content,
            kind=kind,
            tags=tags,
            entities=entities,
            subject=subject,
            predicate=predicate,
            object=object,
            confidence=confidence,
            source=source,
            scope=scope,
            event_time=event_time,
            session_id=session_id,
        )

    @server.tool(
        title="Search memory",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    @_tool_errors
    def search(
        query: Annotated[str, Field(description="Words or a question, e.g. 'where does Alice live'.")],
        limit: Annotated[int | None, Field(description="How many results (1-100, default 10).")] = None,
        scope: Annotated[
            str | None, Field(description="Search this scope and global (default: global only).")
        ] = None,
    ) -> SearchOut:
        """Find stored facts by meaning and by keyword, best first, each with the reasons it matched.

        Use it before answering anything that may depend on what you were told earlier. Example:
        search(query="what does Alice drink in the morning", limit=5)
        """
        return memory.search(query, limit=limit, scope=scope)

    return server


def run(server: MCPServer, settings: Settings) -> None:
    kwargs: dict[str, Any] = {}
    if settings.transport != "stdio":
        kwargs = {
            "host": settings.host,
            "port": settings.port,
            "transport_security": transport_security(settings),
        }
    transport = "streamable-http" if settings.transport == "http" else settings.transport
    server.run(transport, **kwargs)
