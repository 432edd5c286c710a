"""The owner's private RPC: a token-guarded loopback HTTP API that runs API operations for proxies.

Each call is ``POST /call/{operation}`` with the operation's arguments as JSON. Both sides
read the operation from ``api.OPERATIONS``: the owner turns the arguments back into their
declared types, the proxy turns the result back into its declared type. An anticipated
failure (``HippographError``) crosses as its class name and message and is raised again,
as it was, on the proxy's side.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import socket
import threading
from typing import Any

import anyio.to_thread
import httpx2
import uvicorn
from pydantic_core import to_jsonable_python
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hippograph.api import OPERATIONS, MemoryAPI
from hippograph.domain import errors
from hippograph.domain.errors import HippographError
from hippograph.sharing.ownership import OwnerInfo

log = logging.getLogger(__name__)


class OwnerGone(Exception):
    """The owner did not answer (dead, restarting or not yet listening): find the new one."""


def _api_app(memory: MemoryAPI, token: str) -> Starlette:
    expected = f"Bearer {token}".encode()

    async def call(request: Request) -> JSONResponse:
        if not hmac.compare_digest(request.headers.get("authorization", "").encode(), expected):
            return JSONResponse({"error": "Unauthorized", "message": "bad token"}, status_code=401)
        name = request.path_params["method"]
        operation = OPERATIONS.get(name)
        if operation is None:
            return JSONResponse({"error": "NotFound", "message": f"no method {name}"}, status_code=404)
        sent = await request.json()
        try:
            arguments = operation.parse_arguments(sent)
            result = await anyio.to_thread.run_sync(lambda: memory.call(name, arguments))
        except HippographError as err:
            return JSONResponse({"error": type(err).__name__, "message": str(err)}, status_code=422)
        except Exception:
            log.exception("owner API call %s failed", name)
            return JSONResponse({"error": "Internal", "message": f"{name} failed"}, status_code=500)
        return JSONResponse({"result": operation.dump_result(result)})

    return Starlette(routes=[Route("/call/{method}", call, methods=["POST"])])


class OwnerServer:
    """The owner's private API on a random loopback port, in a background thread."""

    def __init__(self, memory: MemoryAPI) -> None:
        self.token = secrets.token_urlsafe(32)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(_api_app(memory, self.token), log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="hippograph-owner-api", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class OwnerClient:
    """Calls the owner's API; raises the owner's HippographError subclasses as they were."""

    def __init__(self, info: OwnerInfo) -> None:
        self.info = info
        self._client = httpx2.Client(
            base_url=f"http://127.0.0.1:{info.port}",
            headers={"authorization": f"Bearer {info.token}"},
            timeout=httpx2.Timeout(300.0, connect=2.0),
        )

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        try:
            response = self._client.post(f"/call/{name}", json=to_jsonable_python(arguments))
        except httpx2.TransportError as err:
            raise OwnerGone(str(err)) from err
        body = response.json()
        if response.status_code == 422:
            error_type = getattr(errors, body["error"], HippographError)
            raise error_type(body["message"])
        if response.status_code != 200:
            # 401: owner.json belongs to a newer owner than the one we know.
            raise OwnerGone(f"owner answered {response.status_code}: {body.get('message')}")
        return OPERATIONS[name].parse_result(body["result"])

    def close(self) -> None:
        self._client.close()
