"""HTTP transports check Host/Origin and the bearer token; without a token a server does not
listen beyond loopback.

(Scopes isolating memories: tests/test_security.py.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from testkit.client import HEADERS, INIT, call
from testkit.process import PYTHON, http_server, server_env

pytestmark = pytest.mark.anyio


async def test_http_checks_host_origin_and_token(tmp_path: Path, models_dir: Path) -> None:
    auth = {"authorization": "Bearer s3cret-test-token"}
    async with http_server(tmp_path / "data", models_dir, HIPPOGRAPH_TOKEN="s3cret-test-token") as server:
        url = server.url
        async with httpx.AsyncClient(timeout=30) as client:
            no_token = await client.post(url, json=INIT, headers=HEADERS)
            assert no_token.status_code == 401
            assert "HIPPOGRAPH_TOKEN" in no_token.text
            wrong = await client.post(url, json=INIT, headers={**HEADERS, "authorization": "Bearer nope"})
            assert wrong.status_code == 401
            evil_origin = await client.post(
                url, json=INIT, headers={**HEADERS, **auth, "origin": "http://evil.example"}
            )
            assert evil_origin.status_code == 403
            rebound_host = await client.post(
                url, json=INIT, headers={**HEADERS, **auth, "host": "evil.example"}
            )
            assert rebound_host.status_code in (403, 421)
            good = await client.post(
                url, json=INIT, headers={**HEADERS, **auth, "origin": f"http://127.0.0.1:{server.port}"}
            )
            assert good.status_code == 200

        import httpx2

        async with (
            httpx2.AsyncClient(headers=auth, timeout=30) as authed,
            streamable_http_client(url, http_client=authed) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            fact = await call(session, "remember", content="Token-holders can write")
            assert fact["id"].startswith("f_")


def test_non_loopback_bind_without_token_is_refused(tmp_path: Path, models_dir: Path) -> None:
    result = subprocess.run(
        [PYTHON, "-m", "hippograph", "serve", "--transport", "http", "--host", "0.0.0.0", "--port", "1"],
        env=server_env(tmp_path / "data", models_dir),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "HIPPOGRAPH_TOKEN" in result.stderr
    assert not (tmp_path / "data").exists()
