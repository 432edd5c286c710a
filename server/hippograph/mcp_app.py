"""MCP wiring only: tools (made from ``api.MemoryAPI``), resources, prompts and completions over a memory.

A tool validates nothing itself: it calls the memory and returns its reply. Anticipated
failures (``HippographError``) become tool errors whose message the model can act on, and so
do arguments that fail their declared types (in our words: ``Operation.explain_invalid``). A
prompt or resource request the client got wrong is invalid params (-32602), not an internal
error.

Each server has a default scope (``Settings.scope``: ``HIPPOGRAPH_SCOPE``, ``serve --scope``):
a call or resource read that names no scope gets it here, in the process the client talks to,
before the memory runs it or sends it to the owner, so two servers of one data dir (an IDE
window on project X, a desktop chat on global) each keep their own.
"""

from __future__ import annotations

import inspect
import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import unquote

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ToolError,
    UnexpectedToolError,
)
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.tools import Tool
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    GetPromptResult,
    InputRequiredResult,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    ToolAnnotations,
)
from mcp_types import Tool as MCPTool
from pydantic import Field, ValidationError

from hippograph import __version__
from hippograph.api import OPERATIONS, MemoryAPI, Operation
from hippograph.domain import replies
from hippograph.domain import validation as check
from hippograph.domain.errors import HippographError, InvalidInput, NotFound
from hippograph.domain.models import GLOBAL_SCOPE
from hippograph.mcp_resources import ENTITY_TEMPLATE, add_resources
from hippograph.wire import answering_malformed, stdin_lines

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
hippograph is your long-term memory about the user and their work, kept across conversations.
- At the start of a task, search (or recall) what you already know about its people, projects, preferences.
- Remember durable things as you learn them: one statement per call ("Alice prefers tea over coffee"),
  with subject/predicate/object when the fact has that shape, and the entities it is about.
- Do not store secrets (keys, tokens, passwords): they are refused.
- Each result carries a fact id; use it to correct, confirm, explain or forget that fact instead of
  storing a duplicate (with the same scope, if your search named one).
- Searching changes nothing: after answering, pass the ids of the facts you relied on to mark_used.
- remember's reply lists close stored facts (`similar`): one marked `conflict` may need correct.
  forget with purge=true erases a fact when the user asks you to delete it.
"""

UPDATED_RESOURCES = ("memory://context", "memory://stats")

COMPLETIONS = 20  # most values one completion offers
PROMPT_BUDGET = 400  # tokens of recall a prompt carries: context, not the answer

RECALL_PROMPT = """\
What do you know about {topic}? Answer from memory: search or recall it (again with other words if \
results are thin), say what is stored and how sure it is, and say plainly what memory does not hold. \
Pass the ids of the facts you used to mark_used.

{context}"""

SAVE_PROMPT = """\
Save this conversation's durable decisions, preferences and facts to memory{focus}. For each: search \
first; if it is stored and still true, skip it; if it changed, correct that fact; else remember it as \
one self-contained statement (names, not pronouns) with its entities. When a remember reply lists a \
similar fact, judge it: the same in other words, remember again with restates=<its id>; a changed \
value, correct that fact. A lesson of what not to do ("never force-push to main") is kind='negative' \
with triggers: the words that should bring it back as a warning. Skip passing details and secrets. \
Then list what you saved or corrected, in one line each."""

TIDY_PROMPT = """\
Tidy memory with the user. Call review{scoped}. For each item, show the facts (explain or search \
for their content), ask the user what holds, and do what the item's `suggested` says for that \
answer: for a conflict, correct the fact that no longer holds (or forget it); for a pair to \
compare or a duplicate, forget the one it names as the copy (with the reason it gives) or the \
older one if the value changed; for a weak fact, confirm or forget it; for a gap, ask the \
question and remember the answer. Change nothing the user did not agree to, and skip what they \
do not want to decide. Then list what changed, one line each."""

SUMMARY_PROMPT = """\
Summarize what memory holds about {name} in two to four sentences: who or what it is, what is \
current, what changed. Use only the profile below; say nothing it does not hold. Then store the \
summary: {store}

{profile}"""


# A long call's progress, for clients that ask: what it is doing, then what it found.
_PROGRESS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "recall": (
        "searching memory and walking the graph",
        lambda out: f"{len(out.fact_ids)} facts, {out.tokens} tokens",
    ),
}


def _tool(
    operation: Operation, memory: MemoryAPI, bus: InMemorySubscriptionBus, scope: str
) -> Callable[..., Any]:
    """The MCP tool for one API operation: its declared signature, run in a worker thread.

    An operation with a ``scope`` parameter (even one the tool does not show, as correct's)
    runs in ``scope``, the server's default, unless the call names another.

    The reply is ``replies.lean``'s compact form, as structured content and as its JSON text.
    Anticipated failures become tool errors the model sees verbatim; after a successful write,
    resource subscribers hear that memory changed.
    """
    name = operation.name
    progress = _PROGRESS.get(name)
    scoped = "scope" in operation.signature.parameters

    async def tool(ctx: Context | None = None, **arguments: Any) -> Any:
        if scoped and arguments.get("scope") is None:
            arguments["scope"] = scope
        if ctx is not None and progress is not None:
            await ctx.report_progress(0, 2, progress[0])
        try:
            result = await anyio.to_thread.run_sync(lambda: getattr(memory, name)(**arguments))
        except HippographError as err:
            raise ToolError(str(err)) from err
        except Exception as err:
            # A fault of hippograph or its engines, not of the call: say so, and what to do,
            # without the exception's text (it may quote stored content); the log has it all.
            log.exception("%s failed unexpectedly", name)
            raise ToolError(_unexpected(name, operation.read_only, err)) from err
        if ctx is not None and progress is not None:
            await ctx.report_progress(2, 2, progress[1](result))
        if not operation.read_only:
            for uri in UPDATED_RESOURCES:
                await bus.publish(ResourceUpdated(uri=uri))
        structured = replies.lean(result)
        return CallToolResult(
            content=[TextContent(type="text", text=replies.as_text(structured))],
            structured_content=structured,
        )

    context = inspect.Parameter(
        "ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context | None
    )
    signature = operation.tool_signature
    signature = signature.replace(parameters=[*signature.parameters.values(), context])
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    tool.__annotations__["return"] = operation.result
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = operation.doc
    return tool


# Each operation's tool as first made, by name: the SDK derives a tool's argument model and
# schemas from its function's signature (~18 ms a tool, 10 tools), which is the same for every
# server of a process (a test run builds hundreds).
_MADE: dict[str, Tool] = {}


def _unexpected(name: str, read_only: bool, err: Exception) -> str:
    """What a tool answers when hippograph itself failed running it."""
    then = (
        "Try once more; if it fails again, tell the user and suggest `hippograph doctor`."
        if read_only
        else "It may or may not have been stored: search for it before sending it again, and if "
        "this repeats, tell the user and suggest `hippograph doctor`."
    )
    return (
        f"{name} failed inside hippograph ({type(err).__name__}), not because of its arguments; "
        f"the server's log (its standard error, kept by the MCP client) has the details. {then}"
    )


def _as_tool(operation: Operation, fn: Callable[..., Any]) -> Tool:
    """The SDK's tool for ``operation``, calling ``fn`` (made by ``_tool``)."""
    made = _MADE.get(operation.name)
    if made is None:
        made = Tool.from_function(
            fn,
            name=operation.name,
            title=operation.title,
            description=operation.doc,
            annotations=ToolAnnotations(
                read_only_hint=operation.read_only,
                destructive_hint=operation.destructive,
                idempotent_hint=operation.idempotent,
                open_world_hint=False,  # memory is a closed world: no system outside it
            ),
            structured_output=True,
        )
        _MADE[operation.name] = made
    return made.model_copy(update={"fn": fn})


class MemoryServer(MCPServer[Any]):
    """The SDK's server, strict about arguments and about messages.

    A misspelt or invented argument (``remember(..., tag=["x"])``) is an error naming it and
    listing the tool's arguments, and each tool's input schema says so
    (``additionalProperties: false``), so the model learns what it sent wrong (the SDK would
    drop it). A message a stream transport cannot read gets a JSON-RPC error (the SDK would
    drop it too, and the client would wait for ever): see ``wire``.
    """

    async def serve_streams(self, read: Any, write: anyio.abc.ObjectSendStream[SessionMessage] | Any) -> None:
        """Serve one client over a stream transport's pair (stdio, an SSE connection)."""
        lowlevel = self._lowlevel_server
        async with answering_malformed(read, write) as checked:
            await lowlevel.run(checked, write, lowlevel.create_initialization_options())

    async def run_stdio_async(self) -> None:
        lines = stdin_lines(sys.stdin.fileno())  # the SDK only iterates stdin's lines
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            await self.serve_streams(read, write)

    async def list_tools(self) -> list[MCPTool]:
        return [
            tool.model_copy(
                update={
                    "input_schema": {
                        **compact_schema(tool.input_schema, null=False),
                        "additionalProperties": False,
                    },
                    "output_schema": compact_schema(tool.output_schema) if tool.output_schema else None,
                }
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        operation = OPERATIONS.get(name)
        if operation is None or not operation.tool:
            return await super().call_tool(name, arguments, context)
        try:
            operation.check_names(arguments, tool=True)
        except InvalidInput as err:
            raise ToolError(f"Error executing tool {name}: {err}") from err
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as err:
            if not isinstance(err.__cause__, ValidationError):
                raise
            # The arguments failed the declared types: say so in our words, not pydantic's.
            invalid = err.__cause__
            raise ToolError(f"Error executing tool {name}: {operation.explain_invalid(invalid)}") from invalid

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        """The SDK's, but an unknown prompt or a missing or unknown argument is the client's
        mistake: invalid params (-32602) saying what to send, not an internal error."""
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            known = ", ".join(p.name for p in self._prompt_manager.list_prompts())
            raise MCPError(INVALID_PARAMS, f"there is no prompt {check.shown(name)}: use one of {known}")
        declared = {arg.name: arg for arg in prompt.arguments or []}
        sent = set(arguments or {})
        missing = [arg for arg in declared.values() if arg.required and arg.name not in sent]
        if missing:
            needed = "; ".join(
                f"{arg.name} ({arg.description})" if arg.description else arg.name for arg in missing
            )
            raise MCPError(INVALID_PARAMS, f"prompt {name} needs the argument {needed}: send it in arguments")
        unknown = sorted(sent - set(declared))
        if unknown:
            raise MCPError(
                INVALID_PARAMS,
                f"prompt {name} takes no argument {', '.join(map(check.shown, unknown))}: "
                f"it takes only {', '.join(declared) or 'none'}",
            )
        return await super().get_prompt(name, arguments, context)


def compact_schema(schema: dict[str, Any], *, null: bool = True) -> dict[str, Any]:
    """A JSON schema as pydantic writes it, without what tells a client nothing: titles (the
    property names again), ``anyOf [X, null]`` written as X or null, ``default: null``.

    An output schema (``null=True``) says null only where a reply may hold one: in a required
    field (``replies.lean`` leaves out an optional field that holds nothing), so one type, not a
    list of two, for the rest. An input schema (``null=False``) leaves null out of optional
    arguments: leaving one out says the same, and the tool still takes an explicit null.
    """
    out: dict[str, Any] = {}
    required = set(schema.get("required", []))
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties":
            out[key] = {
                name: compact_schema(sub, null=null and name in required) for name, sub in value.items()
            }
        elif key == "$defs":
            out[key] = {name: compact_schema(sub, null=null) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = compact_schema(value, null=null)
        elif key in ("anyOf", "oneOf", "allOf"):
            out[key] = [compact_schema(sub, null=null) for sub in value]
        else:
            out[key] = value
    options = out.get("anyOf", [])
    others = [o for o in options if o != {"type": "null"}]
    if len(options) == 2 and len(others) == 1 and isinstance(others[0].get("type"), str):
        (kept,) = others
        del out["anyOf"]
        out = {**kept, **out}
        if null:
            out["type"] = [kept["type"], "null"]
            if "enum" in kept:
                out["enum"] = [*kept["enum"], None]
        if "default" in out and out["default"] is None:
            del out["default"]
    return out


def instructions(scope: str) -> str:
    """The server's instructions to the model, naming its default scope when it is not global."""
    if scope == GLOBAL_SCOPE:
        return INSTRUCTIONS
    return (
        f"{INSTRUCTIONS}- This server works in scope {scope}: calls that name no scope store facts there "
        "and read it plus global; pass scope='global' for facts that hold beyond it (who the user is).\n"
    )


def build_server(memory: MemoryAPI, scope: str = GLOBAL_SCOPE) -> MemoryServer:
    """The MCP server: one tool per operation ``api.MemoryAPI`` offers as a tool, and the resources.

    ``scope`` (checked by ``Settings``) is the default of every call and resource that names none.
    """
    default_scope = scope
    bus = InMemorySubscriptionBus()
    server = MemoryServer(
        name="hippograph",
        title="hippograph memory",
        version=__version__,
        instructions=instructions(scope),
        subscriptions=bus,
        tools=[
            _as_tool(operation, _tool(operation, memory, bus, default_scope))
            for operation in OPERATIONS.values()
            if operation.tool
        ],
    )
    add_resources(server, memory, default_scope)
    _add_prompts(server, memory, default_scope)
    return server


# Each prompt as first made, by name: its arguments' metadata is derived from the function's
# signature (~5 ms a prompt), the same for every server of a process (see _MADE for tools).
_PROMPTS: dict[str, Prompt] = {}
_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def _prompt(server: MemoryServer, name: str, title: str) -> Callable[[_Fn], _Fn]:
    """Register the decorated function as the prompt ``name`` of ``server``."""

    def register(fn: _Fn) -> _Fn:
        made = _PROMPTS.get(name)
        if made is None:
            made = _PROMPTS[name] = Prompt.from_function(fn, name=name, title=title)
        server.add_prompt(made.model_copy(update={"fn": fn}))
        return fn

    return register


def _add_prompts(server: MemoryServer, memory: MemoryAPI, scope: str) -> None:
    """The prompts (recall a topic, summarize an entity, save the conversation, tidy memory) and
    completions for their and the resource templates' arguments: entity names, and scopes."""

    @_prompt(server, "what_do_you_know", "What do you know about...")
    async def what_do_you_know(
        topic: Annotated[str, Field(description="A person, project or subject, e.g. Alice.")],
    ) -> str:
        """Answer from memory what it holds about a topic, with its recall as context."""
        try:
            recalled = await anyio.to_thread.run_sync(
                lambda: memory.recall(topic, budget_tokens=PROMPT_BUDGET, scope=scope).narrative
            )
        except HippographError:
            recalled = ""
        context = (
            f"Memory's recall for {topic}:\n{recalled}" if recalled else f"Recall found nothing on {topic}."
        )
        return RECALL_PROMPT.format(topic=topic, context=context)

    @_prompt(server, "summarize_entity", "Summarize an entity")
    async def summarize_entity(
        name: Annotated[str, Field(description="A person, project or thing memory knows, e.g. Alice.")],
    ) -> str:
        """Write a short summary of an entity from its profile and store it as a fact about it."""
        try:
            profile = await anyio.to_thread.run_sync(lambda: memory.profile(name, scope=scope))
        except (NotFound, InvalidInput) as err:  # the client's mistake: invalid params, saying why
            raise MCPError(INVALID_PARAMS, str(err)) from err
        if profile.summary is not None:
            store = f'correct(fact_id="{profile.summary.id}", content=<the summary>) replaces the older one.'
        else:
            store = f'remember(content=<the summary>, entities=["{profile.name}"], tags=["summary"]).'
        return SUMMARY_PROMPT.format(name=profile.name, store=store, profile=replies.text(profile))

    @_prompt(server, "save_decisions", "Save this session's decisions")
    def save_decisions(
        focus: Annotated[str | None, Field(description="Only what concerns this, e.g. the deploy.")] = None,
    ) -> str:
        """Remember each durable decision, preference and fact of this conversation, without duplicates."""
        return SAVE_PROMPT.format(focus=f" about {focus}" if focus else "")

    @_prompt(server, "tidy_memory", "Tidy memory")
    def tidy_memory() -> str:
        """Go through memory's review queue: conflicts, pairs to compare, duplicates, weak facts, gaps."""
        return TIDY_PROMPT.format(scoped="" if scope == GLOBAL_SCOPE else f"(scope={scope!r})")

    @server.completion()  # type: ignore[untyped-decorator, no-untyped-call]  # unannotated in mcp 2.3
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        named = (context.arguments if context else None) or {}
        of: Literal["entity", "scope"]
        if argument.name == "scope" and isinstance(ref, ResourceTemplateReference):
            of, within = "scope", None
        elif (
            isinstance(ref, PromptReference)
            and (ref.name, argument.name) in (("what_do_you_know", "topic"), ("summarize_entity", "name"))
        ) or (
            isinstance(ref, ResourceTemplateReference)
            and (ref.uri, argument.name) == (ENTITY_TEMPLATE, "name")
        ):
            of, within = "entity", named.get("scope") or scope
        else:
            return None
        try:
            values = await anyio.to_thread.run_sync(
                lambda: memory.names(unquote(argument.value), of, scope=within, limit=COMPLETIONS + 1)
            )
        except HippographError:
            return None
        return Completion(values=values[:COMPLETIONS], has_more=len(values) > COMPLETIONS)
