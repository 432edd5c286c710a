"""What arrives on the wire that a client should not send, and how the server stops.

Every malformed message gets a JSON-RPC error (never silence); a connection that sends no
request head is closed; a LAN client of a token-guarded server is served; SIGTERM and Ctrl-C
close the memory cleanly and quietly.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import ByteStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream

from hippograph.service.memory import Memory
from hippograph.sharing.ownership import read_owner
from hippograph.store.embed import FastEmbedder
from testkit.client import HEADERS, INIT, call, connect_http
from testkit.process import PYTHON, http_server, server_env, settings_at

pytestmark = pytest.mark.anyio

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOKEN = "s3cret-test-token"


def _search(request_id: int, query: str) -> str:
    """A tools/call line whose query is ``query``, written as raw JSON text."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"search","arguments":{{"query":{query}}}}}}}'
    )


# (raw message, the id its error must carry: None when the id cannot be read)
MALFORMED = [
    ("{not json", None),
    # Half an emoji, as JSON.stringify writes a lone surrogate.
    (_search(2, '"smile \\ud83d"'), 2),
    (_search(3, "[" * 10_000 + "]" * 10_000), None),
    (_search(4, "[" * 500 + "]" * 500), 4),
    ("[1, 2]", None),
    ('{"jsonrpc":"2.0","id":5,"method":7}', 5),
]


def _assert_error_reply(reply: dict[str, Any], expected_id: int | None, raw: str) -> None:
    assert reply.get("id") == expected_id, (raw[:80], reply)
    assert reply["error"]["code"] in (-32700, -32600), (raw[:80], reply)
    assert reply["error"]["message"], reply


@asynccontextmanager
async def _stdio_server(
    data_dir: Path, models_dir: Path
) -> AsyncIterator[tuple[Process, BufferedByteReceiveStream]]:
    async with await anyio.open_process(
        [PYTHON, "-m", "hippograph", "serve"],
        # A crash in native code (an exit by SIGABRT once, with nothing on stderr) prints where
        # each thread was.
        env={**server_env(data_dir, models_dir), "PYTHONFAULTHANDLER": "1"},
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        yield process, BufferedByteReceiveStream(process.stdout)


async def _send(process: Process, line: str) -> None:
    assert process.stdin is not None
    await process.stdin.send(line.encode("utf-8") + b"\n")


async def _reply(lines: BufferedByteReceiveStream) -> dict[str, Any]:
    with anyio.fail_after(30):
        return dict(json.loads(await lines.receive_until(b"\n", 1 << 20)))


async def test_every_malformed_line_on_stdio_gets_a_json_rpc_error(tmp_path: Path, models_dir: Path) -> None:
    async with _stdio_server(tmp_path / "data", models_dir) as (process, lines):
        await _send(process, json.dumps(INIT))
        assert (await _reply(lines))["id"] == 1
        await _send(process, json.dumps(INITIALIZED))
        for raw, expected_id in MALFORMED:
            await _send(process, raw)
            _assert_error_reply(await _reply(lines), expected_id, raw)
        # And the server still answers.
        await _send(process, _search(9, '"smile"'))
        assert "result" in await _reply(lines)
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.fail_after(30):
            await process.wait()


@asynccontextmanager
async def _sse_stream(client: httpx.AsyncClient, url: str) -> AsyncIterator[tuple[str, Any]]:
    """The SSE stream's endpoint URL and an iterator over its messages' data."""
    async with client.stream("GET", url) as response:
        assert response.status_code == 200

        async def events() -> AsyncIterator[str]:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    yield line.removeprefix("data: ")

        stream = events()
        with anyio.fail_after(30):
            endpoint = await anext(stream)
        yield url.removesuffix("/sse") + endpoint, stream


async def test_every_malformed_message_over_sse_gets_a_json_rpc_error(
    tmp_path: Path, models_dir: Path
) -> None:
    async with (
        http_server(tmp_path / "data", models_dir, "sse") as server,
        httpx.AsyncClient(timeout=30) as client,
        _sse_stream(client, server.url) as (endpoint, messages),
    ):
        await client.post(endpoint, json=INIT)
        with anyio.fail_after(30):
            assert json.loads(await anext(messages))["id"] == 1
        await client.post(endpoint, json=INITIALIZED)
        for raw, expected_id in MALFORMED:
            posted = await client.post(
                endpoint, content=raw.encode(), headers={"content-type": "application/json"}
            )
            assert posted.status_code in (202, 400)
            with anyio.fail_after(30):
                _assert_error_reply(json.loads(await anext(messages)), expected_id, raw)


async def test_every_malformed_message_over_streamable_http_gets_a_json_rpc_error(
    tmp_path: Path, models_dir: Path
) -> None:
    async with (
        http_server(tmp_path / "data", models_dir, "http") as server,
        httpx.AsyncClient(timeout=30) as client,
    ):
        first = await client.post(server.url, json=INIT, headers=HEADERS)
        session = {
            **HEADERS,
            "mcp-session-id": first.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18",
        }
        await client.post(server.url, json=INITIALIZED, headers=session)
        for raw, _ in MALFORMED:
            answer = await client.post(server.url, content=raw.encode(), headers=session)
            assert answer.status_code == 400, (raw[:80], answer.text[:200])
            assert answer.json()["error"]["code"] in (-32700, -32600, -32602), answer.text[:200]


async def _drain(stream: anyio.abc.ByteReceiveStream) -> str:
    chunks = []
    with anyio.fail_after(10):
        try:
            while True:
                chunks.append(await stream.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass
    return b"".join(chunks).decode(errors="replace")


async def _is_closed(stream: ByteStream) -> bool:
    try:
        await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
        return True
    return False


async def test_connections_that_send_no_request_head_are_closed_and_starve_nobody(
    tmp_path: Path, models_dir: Path
) -> None:
    data_dir = tmp_path / "data"
    async with http_server(data_dir, models_dir, "http", HIPPOGRAPH_HEADER_TIMEOUT_S="1") as server:
        idle = [await anyio.connect_tcp("127.0.0.1", server.port) for _ in range(30)]
        slow = await anyio.connect_tcp("127.0.0.1", server.port)  # a head that never ends
        await slow.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        async with connect_http(server.url) as session:
            assert (await call(session, "remember", content="Idle sockets do not block Vera"))["id"]
        owner = read_owner(data_dir)
        assert owner is not None and owner.address.startswith("unix:")
        private = [await anyio.connect_unix(owner.address.removeprefix("unix:")) for _ in range(30)]
        with anyio.fail_after(15):
            for stream in [*idle, slow, *private]:
                assert await _is_closed(stream)
                await stream.aclose()


async def test_connections_over_the_limit_are_closed_at_once(tmp_path: Path, models_dir: Path) -> None:
    async with http_server(tmp_path / "data", models_dir, "http", HIPPOGRAPH_HEADER_TIMEOUT_S="60") as server:
        held = [await anyio.connect_tcp("127.0.0.1", server.port) for _ in range(110)]
        closed = 0
        with anyio.move_on_after(5):
            for stream in reversed(held):
                with anyio.move_on_after(0.5):
                    closed += await _is_closed(stream)
        for stream in held:
            await stream.aclose()
        assert 10 <= closed < 110


def _lan_address() -> str:
    """What a LAN client would write in Host: this machine's non-loopback address, or a made-up one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET: nothing is sent
            address = str(probe.getsockname()[0])
        except OSError:
            address = "192.168.1.23"
    return address if not address.startswith("127.") else "192.168.1.23"


async def test_a_token_guarded_server_on_all_interfaces_serves_lan_clients(
    tmp_path: Path, models_dir: Path
) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with (
        http_server(tmp_path / "data", models_dir, "http", host="0.0.0.0", HIPPOGRAPH_TOKEN=TOKEN) as server,
        httpx.AsyncClient(timeout=30) as client,
    ):
        lan_host = f"{_lan_address()}:{server.port}"
        for host in (lan_host, f"memory.lan:{server.port}"):
            served = await client.post(server.url, json=INIT, headers={**HEADERS, **auth, "host": host})
            assert served.status_code == 200, (host, served.text)
        same_origin = await client.post(
            server.url,
            json=INIT,
            headers={**HEADERS, **auth, "host": lan_host, "origin": f"http://{lan_host}"},
        )
        assert same_origin.status_code == 200
        foreign = await client.post(
            server.url,
            json=INIT,
            headers={**HEADERS, **auth, "host": lan_host, "origin": "http://evil.example"},
        )
        assert foreign.status_code == 403
        no_token = await client.post(server.url, json=INIT, headers={**HEADERS, "host": lan_host})
        assert no_token.status_code == 401


async def test_on_loopback_a_foreign_host_is_refused_even_with_the_token(
    tmp_path: Path, models_dir: Path
) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with (
        http_server(tmp_path / "data", models_dir, "http", HIPPOGRAPH_TOKEN=TOKEN) as server,
        httpx.AsyncClient(timeout=30) as client,
    ):
        rebound = await client.post(
            server.url, json=INIT, headers={**HEADERS, **auth, "host": f"evil.example:{server.port}"}
        )
        assert rebound.status_code == 421


async def test_a_refused_origin_on_sse_is_a_403_and_one_log_line(tmp_path: Path, models_dir: Path) -> None:
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        async with (
            http_server(tmp_path / "data", models_dir, "sse", stderr=stderr) as server,
            httpx.AsyncClient(timeout=30) as client,
        ):
            refused = await client.get(server.url, headers={"origin": "http://evil.example"})
            assert refused.status_code == 403
            assert (await client.get(server.url, headers={"host": "evil.example"})).status_code == 421
    text = log.read_text()
    assert "Traceback" not in text
    assert len([line for line in text.splitlines() if line.strip()]) <= 2, text


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_sigterm_closes_the_memory_cleanly(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        async with http_server(data_dir, models_dir, transport, stderr=stderr) as server:  # noqa: SIM117
            async with connect_http(server.url, transport) as session:
                fact = await call(session, "remember", content="Quinn waters the ferns on Sundays")
                assert read_owner(data_dir) is not None
                # Stopped while a client is still connected (an SSE stream stays open).
                server.process.send_signal(signal.SIGTERM)
                with anyio.fail_after(30):
                    while server.process.poll() is None:
                        await anyio.sleep(0.05)
    assert server.process.returncode == 0, log.read_text()
    assert read_owner(data_dir) is None
    assert "Traceback" not in log.read_text()

    reconciles: list[object] = []
    real = Memory.reconcile
    monkeypatch.setattr(Memory, "reconcile", lambda self: reconciles.append(self) or real(self))
    memory = Memory.open(settings_at(data_dir, models_dir), embedder=embedder)
    try:
        assert reconciles == []
        assert [hit.id for hit in memory.search("who waters the ferns", limit=1).results] == [fact["id"]]
    finally:
        memory.close()


async def test_ctrl_c_on_stdio_stops_without_a_traceback(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    async with _stdio_server(data_dir, models_dir) as (process, lines):
        await _send(process, json.dumps(INIT))
        assert (await _reply(lines))["id"] == 1
        await _send(process, json.dumps(INITIALIZED))
        await _send(process, _search(2, '"ferns"'))
        assert "result" in await _reply(lines)
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(30):
            code = await process.wait()
        assert process.stderr is not None
        err = await _drain(process.stderr)
    assert code == 0, err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) <= 1, err
    assert read_owner(data_dir) is None
