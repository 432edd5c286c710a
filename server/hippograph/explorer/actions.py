"""The explorer's writes: confirm, correct and forget a fact, through the operations the MCP tools run.

A write is a ``POST`` with a JSON object, and only the page itself may send one: it must carry
the header ``X-Hippograph-Explorer: 1`` (a page of another site cannot add a custom header
without a CORS preflight, which this app never grants) and, when the browser names an
``Origin``, that origin must be the address the request was sent to. (The Host header of every
request is checked by ``app.build_app``: DNS rebinding.) Each write runs through ``MemoryAPI``
as a tool call does, so the process that owns the stores screens it for secrets and applies the
lifecycle's rules; a refused write changes nothing. An explorer listening beyond loopback
takes no writes at all: nothing there tells the user's page from anyone else on the network.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hippograph.api import MemoryAPI
from hippograph.domain.errors import InvalidInput

WRITE_HEADER = "X-Hippograph-Explorer"

Call = Callable[[Callable[[], Any]], Awaitable[Any]]
B = TypeVar("B", bound="_FactBody")


class _FactBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fact_id: StrictStr
    scope: StrictStr | None = None  # the page's scope: a fact of another scope is not found


class ConfirmBody(_FactBody):
    pass


class CorrectBody(_FactBody):
    content: StrictStr
    event_time: StrictStr | None = None
    object: StrictStr | None = None


class ForgetBody(_FactBody):
    reason: StrictStr | None = None
    purge: StrictBool = False


_EXAMPLES: dict[type[_FactBody], str] = {
    ConfirmBody: '{"fact_id": "f_0123456789abcdef"}',
    CorrectBody: '{"fact_id": "f_0123456789abcdef", "content": "Alice lives in Porto"}',
    ForgetBody: '{"fact_id": "f_0123456789abcdef", "reason": "no longer true", "purge": false}',
}


def check_same_origin(request: Request) -> None:
    """Refuse a write that a page of another site could have sent (403), or one not sent as JSON (415)."""
    if request.headers.get(WRITE_HEADER) != "1":
        raise HTTPException(
            403,
            f"a write needs the header {WRITE_HEADER}: 1 (the explorer's page sends it; other pages cannot)",
        )
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        raise HTTPException(
            403, f"a write from {origin[:100]!r} is refused: only the explorer's own page may write"
        )
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise HTTPException(415, "send the write as JSON, with Content-Type: application/json")


async def _read_body(request: Request, model: type[B]) -> B:
    """The write's JSON object as ``model``, or ``InvalidInput`` saying what to send."""
    check_same_origin(request)
    example = _EXAMPLES[model]
    try:
        sent = await request.json()
    except ValueError:
        sent = None
    if not isinstance(sent, dict):
        raise InvalidInput(f"send a JSON object, e.g. {example}")
    accepted = list(model.model_fields)
    unknown = sorted(set(sent) - set(accepted))
    if unknown:
        raise InvalidInput(
            f"unknown field {unknown[0][:40]!r}: send only {', '.join(accepted)}, e.g. {example}"
        )
    try:
        return model.model_validate(sent)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        raise InvalidInput(f"{problems}; send e.g. {example}") from None


def routes(memory: MemoryAPI, call: Call, *, writable: bool = True) -> list[Route]:
    """``POST /api/confirm``, ``/api/correct`` and ``/api/forget``: each answers what the tool of
    that name returns (the fact as it now stands; for correct, the new fact). Not ``writable``
    (listening beyond loopback, where the page has no way to prove who sends a write): 403."""

    async def read_body(request: Request, model: type[B]) -> B:
        if not writable:
            raise HTTPException(
                403,
                "this explorer is read-only: it listens beyond loopback, where anyone who reaches it "
                "could change your memory. Run hippograph explore without --host to confirm, "
                "correct or forget from the page",
            )
        return await _read_body(request, model)

    async def confirm(request: Request) -> JSONResponse:
        body = await read_body(request, ConfirmBody)
        done = await call(lambda: memory.confirm(body.fact_id, scope=body.scope))
        return JSONResponse(done.model_dump())

    async def correct(request: Request) -> JSONResponse:
        body = await read_body(request, CorrectBody)
        done = await call(
            lambda: memory.correct(
                body.content,
                fact_id=body.fact_id,
                event_time=body.event_time,
                object=body.object,
                scope=body.scope,
            )
        )
        return JSONResponse(done.model_dump())

    async def forget(request: Request) -> JSONResponse:
        body = await read_body(request, ForgetBody)
        done = await call(
            lambda: memory.forget(body.fact_id, reason=body.reason, purge=body.purge, scope=body.scope)
        )
        return JSONResponse(done.model_dump())

    return [
        Route("/api/confirm", confirm, methods=["POST"]),
        Route("/api/correct", correct, methods=["POST"]),
        Route("/api/forget", forget, methods=["POST"]),
    ]
