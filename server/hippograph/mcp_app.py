"""MCP wiring only: tools, resources and transports over an open ``Memory``.

A tool validates nothing itself: it calls the service and shapes the reply. Anticipated
failures (``HippographError``) become tool errors whose message the model can act on.
"""

from __future__ import annotations

import functools
import hmac
import inspect
import json
from collections.abc import Callable
from typing import Annotated, Literal, ParamSpec, TypeVar
from urllib.parse import unquote

import anyio
import anyio.from_thread
import anyio.to_thread
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import ToolAnnotations
from pydantic import Field
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from hippograph import __version__
from hippograph.config import Settings
from hippograph.domain.errors import HippographError
from hippograph.domain.models import (
    CorrectOut,
    ExplainOut,
    FactOut,
    LinkOut,
    RecallOut,
    RememberOut,
    SearchOut,
)
from hippograph.sharing.shared import SharedMemory

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

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
StatusName = Literal["staged", "confirmed", "superseded", "retracted"]
DEFAULT_CONTEXT_QUERY = "the user: who they are, their preferences, projects and recent decisions"


def _clean_doc(fn: T) -> T:
    """Tool descriptions come from docstrings: drop their source indentation."""
    fn.__doc__ = inspect.cleandoc(fn.__doc__ or "")
    return fn


def _tool_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn our anticipated failures into tool errors the model sees verbatim."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except HippographError as err:
            raise ToolError(str(err)) from err

    return _clean_doc(wrapper)


UPDATED_RESOURCES = ("memory://context", "memory://stats")


def _notifies(bus: InMemorySubscriptionBus, fn: Callable[P, R]) -> Callable[P, R]:
    """After a successful write, tell resource subscribers that memory changed."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        result = fn(*args, **kwargs)
        for uri in UPDATED_RESOURCES:
            # Tools run in a worker thread; the bus lives on the server's event loop.
            anyio.from_thread.run(bus.publish, ResourceUpdated(uri=uri))
        return result

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


def build_server(memory: SharedMemory) -> MCPServer:
    bus = InMemorySubscriptionBus()
    server: MCPServer = MCPServer(
        name="hippograph",
        title="hippograph memory",
        version=__version__,
        instructions=INSTRUCTIONS,
        subscriptions=bus,
    )

    def writes(fn: Callable[P, R]) -> Callable[P, R]:
        return _notifies(bus, _tool_errors(fn))

    @server.tool(
        title="Remember a fact",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    @writes
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
        ttl: Annotated[
            Literal["decay", "keep_forever", "ephemeral"] | None,
            Field(
                description="decay (default): fades unless used; keep_forever; ephemeral: expires in a day."
            ),
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
            ttl=ttl,
        )

    @server.tool(
        title="Search memory",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False),
    )
    @_tool_errors
    def search(
        query: Annotated[str, Field(description="Words or a question, e.g. 'where does Alice live'.")],
        limit: Annotated[int | None, Field(description="How many results (1-100, default 10).")] = None,
        kind: Annotated[
            list[Kind] | None, Field(description="Only these kinds, e.g. ['preference'].")
        ] = None,
        entity: Annotated[str | None, Field(description="Only facts about this entity (name or id).")] = None,
        tags: Annotated[list[str] | None, Field(description="Only facts with any of these tags.")] = None,
        status: Annotated[
            list[StatusName] | None, Field(description="Only these statuses (default: staged and confirmed).")
        ] = None,
        after: Annotated[
            str | None,
            Field(description="Only facts from this time on: ISO date or 'last week', 'in May 2023'."),
        ] = None,
        before: Annotated[str | None, Field(description="Only facts before this time (same forms).")] = None,
        scope: Annotated[
            str | None, Field(description="Search this scope and global (default: global only).")
        ] = None,
        include_history: Annotated[
            bool, Field(description="Also return superseded and forgotten facts.")
        ] = False,
        as_of: Annotated[
            str | None, Field(description="Show what memory believed at this time (ISO 8601).")
        ] = None,
    ) -> SearchOut:
        """Find stored facts by meaning, keyword, named entities and graph links, best first.

        Each result says why it matched (channels, ranks, graph path). Use it before answering
        anything that may depend on what you were told earlier. Example:
        search(query="what does Alice drink in the morning", limit=5)
        search(query="deploy steps", kind=["procedure"], entity="Project Apollo")
        """
        return memory.search(
            query,
            limit=limit,
            kind=kind,
            entity=entity,
            tags=tags,
            status=status,
            after=after,
            before=before,
            scope=scope,
            include_history=include_history,
            as_of=as_of,
        )

    @server.tool(
        title="Recall context",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False),
    )
    @_clean_doc
    async def recall(
        context: Annotated[
            str, Field(description="What you are working on or asked, e.g. 'planning Alice's birthday'.")
        ],
        budget_tokens: Annotated[
            int | None, Field(description="Most tokens the narrative may use (default 1000).")
        ] = None,
        scope: Annotated[str | None, Field(description="Scope to recall from, plus global.")] = None,
        ctx: Context | None = None,
    ) -> RecallOut:
        """Recall what memory holds about a task: a markdown narrative that fits a token budget
        (facts grouped by entity, entity profiles, timeline, evidence) plus the ranked facts.

        Use it at the start of a task or conversation. Example:
        recall(context="Alice's travel plans", budget_tokens=600)
        """
        if ctx is not None:
            await ctx.report_progress(0, 2, "searching memory and walking the graph")
        try:
            out = await anyio.to_thread.run_sync(
                lambda: memory.recall(context, budget_tokens=budget_tokens, scope=scope)
            )
        except HippographError as err:
            raise ToolError(str(err)) from err
        if ctx is not None:
            await ctx.report_progress(2, 2, f"{len(out.facts)} facts, {out.tokens} tokens")
        return out

    @server.tool(
        title="Correct a fact",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    @writes
    def correct(
        content: Annotated[str, Field(description="The corrected statement, e.g. 'Alice lives in Paris'.")],
        fact_id: Annotated[
            str | None, Field(description="Id of the wrong fact (from search results).")
        ] = None,
        query: Annotated[
            str | None, Field(description="Or: words that find the wrong fact (its best match is corrected).")
        ] = None,
        kind: Annotated[
            Kind | None, Field(description="Kind of the new fact (default: the old one's).")
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Tags (default: the old one's).")] = None,
        object: Annotated[str | None, Field(description="The corrected value, if the fact has one.")] = None,
        event_time: Annotated[str | None, Field(description="When it happened (ISO 8601).")] = None,
    ) -> CorrectOut:
        """Replace a wrong or outdated fact. The old fact is kept as history (superseded) and
        linked to the new one, so the change can be explained. Prefer this to remembering a
        contradicting fact. Example:
        correct(fact_id="f_0123456789abcdef", content="Alice moved to Paris in 2025")
        """
        return memory.correct(
            content, fact_id=fact_id, query=query, kind=kind, tags=tags, object=object, event_time=event_time
        )

    @server.tool(
        title="Confirm a fact",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    )
    @writes
    def confirm(
        fact_id: Annotated[str, Field(description="Id of the fact the user confirmed.")],
    ) -> FactOut:
        """Pin a fact the user confirmed: confidence 1, status confirmed, it never decays.
        Example: confirm(fact_id="f_0123456789abcdef")
        """
        return memory.confirm(fact_id)

    @server.tool(
        title="Forget a fact",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
    )
    @writes
    def forget(
        fact_id: Annotated[str, Field(description="Id of the fact to forget.")],
        reason: Annotated[str | None, Field(description="Why, e.g. 'user asked', 'no longer true'.")] = None,
    ) -> FactOut:
        """Retract a fact: it no longer appears in search or recall, but stays in history
        (search with include_history=true, explain). Example:
        forget(fact_id="f_0123456789abcdef", reason="user asked to forget it")
        """
        return memory.forget(fact_id, reason)

    @server.tool(
        title="Explain a fact",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    @_tool_errors
    def explain(
        fact_id: Annotated[str, Field(description="Id of the fact to explain.")],
    ) -> ExplainOut:
        """Show where a fact came from and how it stands: source, provenance, evidence,
        supersedes chain both ways, contradictions, linked entities, edges, access count and
        its current relevance with each term. Example: explain(fact_id="f_0123456789abcdef")
        """
        return memory.explain(fact_id)

    @server.tool(
        title="Link facts or entities",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    )
    @writes
    def link(
        from_id: Annotated[str, Field(description="Fact id (f_...) or entity id (e_...).")],
        to_id: Annotated[str, Field(description="Fact id (f_...) or entity id (e_...).")],
        relation: Annotated[
            str,
            Field(
                description="Between facts: relates_to, causes, derived_from, contradicts, supersedes. "
                "Between entities: any predicate, e.g. 'works_at'. Fact to entity: 'about'."
            ),
        ],
        weight: Annotated[float | None, Field(description="0..1, how strong (default 1).")] = None,
    ) -> LinkOut:
        """Add a typed edge that later retrieval follows, e.g. that one fact caused another.
        Example: link(from_id="f_aaa...", to_id="f_bbb...", relation="causes")
        """
        return memory.link(from_id, to_id, relation, weight)

    @server.resource(
        "memory://context",
        name="context",
        title="Memory context",
        description="What memory holds that matters most right now, as a markdown narrative.",
        mime_type="text/markdown",
    )
    def context_resource() -> str:
        return memory.recall(DEFAULT_CONTEXT_QUERY).narrative or "_Memory is empty._"

    @server.resource(
        "memory://context/{query}",
        name="context_for_query",
        title="Memory context for a query",
        description="The recall narrative for a query, e.g. memory://context/Alice%27s%20travel.",
        mime_type="text/markdown",
    )
    def context_for_query(query: str) -> str:
        try:
            return memory.recall(unquote(query)).narrative or "_Nothing relevant in memory._"
        except HippographError as err:
            raise ResourceError(str(err)) from err

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
        "memory://entity/{name}",
        name="entity",
        title="Entity profile",
        description="What memory holds about one entity (person, project, ...), e.g. memory://entity/Alice.",
        mime_type="text/markdown",
    )
    def entity_resource(name: str) -> str:
        entity = unquote(name)
        try:
            found = memory.search(entity, entity=entity, limit=50, record=False)
        except HippographError as err:
            raise ResourceError(str(err)) from err
        lines = [f"# {entity}", ""] + [f"- {hit.content} [{hit.id}, {hit.status}]" for hit in found.results]
        return "\n".join(lines)

    return server


class BearerTokenMiddleware:
    """Every HTTP request must carry ``Authorization: Bearer <HIPPOGRAPH_TOKEN>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            sent = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(sent, self._expected):
                response = JSONResponse(
                    {"error": "unauthorized: send the header 'Authorization: Bearer <HIPPOGRAPH_TOKEN>'"},
                    status_code=401,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer, settings: Settings) -> ASGIApp:
    """The SSE or streamable-HTTP app with Host/Origin checks and, if set, the bearer token."""
    security = transport_security(settings)
    app: ASGIApp
    if settings.transport == "sse":
        app = server.sse_app(transport_security=security, host=settings.host)
    else:
        app = server.streamable_http_app(transport_security=security, host=settings.host)
    token = settings.token.get_secret_value() if settings.token else None
    return BearerTokenMiddleware(app, token) if token else app


def run(server: MCPServer, settings: Settings) -> None:
    if settings.transport == "stdio":
        server.run("stdio")
        return
    config = uvicorn.Config(
        http_app(server, settings), host=settings.host, port=settings.port, log_level="warning"
    )
    uvicorn.Server(config).run()
