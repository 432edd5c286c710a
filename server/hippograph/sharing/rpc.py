"""The owner's private RPC: an HTTP API on the owner's private socket that runs API operations for proxies.

A proxy trusts nothing it has not checked: before its first call it sends ``POST /hello`` with a
random nonce, and only an owner that answers with the nonce signed by the current token (read
from owner.json, which only this user can read) gets the call; a process squatting on a dead
owner's address learns a nonce and nothing else. Each call is then ``POST /call/{operation}``
with the token, a request id (the same on every retry: a write runs once, see
``Memory.call_once``) and the operation's arguments as JSON. Both sides
read the operation from ``api.OPERATIONS``: the owner turns the arguments back into their
declared types, the proxy turns the result back into its declared type. An anticipated
failure (``HippographError``) crosses as its class name and message and is raised again,
as it was, on the proxy's side.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import socket
import threading
from pathlib import Path
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
from hippograph.domain.errors import Closing, HippographError, InternalError
from hippograph.listening import HEADER_TIMEOUT_S, uvicorn_config
from hippograph.sharing.ownership import OwnerInfo

log = logging.getLogger(__name__)


# The header naming a proxied call's request id, the same for every retry of that call.
_REQUEST_ID = "x-hippograph-request"


class OwnerGone(Exception):
    """The owner did not answer (dead, restarting or not yet listening): find the new one."""


def _proof(token: str, nonce: str) -> str:
    """What only a holder of ``token`` can answer to ``nonce``."""
    return hmac.new(token.encode(), b"hippograph owner proof:" + nonce.encode(), hashlib.sha256).hexdigest()


def _api_app(memory: MemoryAPI, token: str) -> Starlette:
    expected = f"Bearer {token}".encode()

    async def hello(request: Request) -> JSONResponse:
        try:
            nonce = str((await request.json())["nonce"])[:128]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "BadRequest", "message": 'send {"nonce": ...}'}, status_code=400)
        return JSONResponse({"proof": _proof(token, nonce)})

    async def call(request: Request) -> JSONResponse:
        if not hmac.compare_digest(request.headers.get("authorization", "").encode(), expected):
            return JSONResponse({"error": "Unauthorized", "message": "bad token"}, status_code=401)
        name = request.path_params["method"]
        operation = OPERATIONS.get(name)
        if operation is None:
            return JSONResponse({"error": "NotFound", "message": f"no method {name}"}, status_code=404)
        sent = await request.json()
        request_id = request.headers.get(_REQUEST_ID)
        try:
            arguments = operation.parse_arguments(sent)
            if request_id:
                result = await anyio.to_thread.run_sync(lambda: memory.call_once(name, arguments, request_id))
            else:
                result = await anyio.to_thread.run_sync(lambda: memory.call(name, arguments))
        except Closing as err:  # not run: the proxy sends it again to the next owner
            return JSONResponse({"error": "Closing", "message": str(err)}, status_code=503)
        except HippographError as err:
            return JSONResponse({"error": type(err).__name__, "message": str(err)}, status_code=422)
        except Exception:
            log.exception("owner API call %s failed", name)
            return JSONResponse({"error": "Internal", "message": f"{name} failed"}, status_code=500)
        return JSONResponse({"result": operation.dump_result(result)})

    return Starlette(
        routes=[Route("/hello", hello, methods=["POST"]), Route("/call/{method}", call, methods=["POST"])]
    )


class OwnerServer:
    """The owner's private API at ``address`` (see ``ownership.socket_address``), in a background thread."""

    def __init__(
        self, memory: MemoryAPI, address: str, *, header_timeout_s: float = HEADER_TIMEOUT_S
    ) -> None:
        self.token = secrets.token_urlsafe(32)
        sock = _listen(address)
        self.address = address if address.startswith("unix:") else f"tcp:{sock.getsockname()[1]}"
        config = uvicorn_config(
            _api_app(memory, self.token),
            header_timeout_s=header_timeout_s,
            log_level="warning",
            access_log=False,
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="hippograph-owner-api", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        if self.address.startswith("unix:"):
            Path(self.address.removeprefix("unix:")).unlink(missing_ok=True)


def _listen(address: str) -> socket.socket:
    if address.startswith("unix:"):
        path = Path(address.removeprefix("unix:"))
        path.unlink(missing_ok=True)  # a dead owner's: only the lock holder gets here
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        path.chmod(0o600)
        return sock
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class OwnerClient:
    """Calls the owner's API; raises the owner's HippographError subclasses as they were."""

    def __init__(self, info: OwnerInfo) -> None:
        self.info = info
        if info.address.startswith("unix:"):
            transport = httpx2.HTTPTransport(uds=info.address.removeprefix("unix:"))
            base_url = "http://owner"
        else:
            transport = httpx2.HTTPTransport()
            base_url = f"http://127.0.0.1:{info.address.removeprefix('tcp:')}"
        self._client = httpx2.Client(
            transport=transport, base_url=base_url, timeout=httpx2.Timeout(300.0, connect=2.0)
        )
        self._proved = False

    def prove(self) -> None:
        """Send nothing until whoever listens proves it holds the token owner.json names."""
        if self._proved:
            return
        nonce = secrets.token_hex(16)
        try:
            response = self._client.post("/hello", json={"nonce": nonce}, timeout=5.0)
            proof = response.json().get("proof") if response.status_code == 200 else None
        except (httpx2.TransportError, ValueError, AttributeError) as err:
            raise OwnerGone(f"no owner answers at {self.info.address}: {err}") from err
        if not isinstance(proof, str) or not hmac.compare_digest(proof, _proof(self.info.token, nonce)):
            log.warning("%s is not the owner owner.json names: not calling it", self.info.address)
            raise OwnerGone(f"the process at {self.info.address} could not prove it owns the data dir")
        self._client.headers["authorization"] = f"Bearer {self.info.token}"
        self._proved = True

    def call_once(self, name: str, arguments: dict[str, Any], request_id: str) -> Any:
        """Run ``name`` on the owner; a write sent again with the same ``request_id`` (after an
        owner died under it) gets the first one's reply, not a second write."""
        self.prove()
        try:
            response = self._client.post(
                f"/call/{name}", json=to_jsonable_python(arguments), headers={_REQUEST_ID: request_id}
            )
        except httpx2.TransportError as err:
            self._proved = False  # whoever answers next proves itself again
            raise OwnerGone(str(err)) from err
        body = response.json()
        if response.status_code == 422:
            error_type = getattr(errors, body["error"], HippographError)
            raise error_type(body["message"])
        if response.status_code == 500:
            # The owner is alive but the call failed: running it again would fail again.
            raise InternalError(f"{body.get('message')}: the owning process logged why")
        if response.status_code != 200:
            # 401: owner.json belongs to a newer owner than the one we know; 503: it is closing.
            raise OwnerGone(f"owner answered {response.status_code}: {body.get('message')}")
        return OPERATIONS[name].parse_result(body["result"])

    def close(self) -> None:
        self._client.close()
