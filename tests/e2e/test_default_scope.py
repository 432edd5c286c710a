"""A server's default scope (``serve --scope``, ``HIPPOGRAPH_SCOPE``): calls that name no scope
write there and read it plus global, over real stdio servers sharing one data dir.

The global server starts first, so it owns the stores and the scoped ones are proxies: the
default scope must be applied by the process the client talks to, not by the owner.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import ClientSession

from testkit.client import call, connect_stdio, stdio_session
from testkit.process import PYTHON, run_cli, server_env

pytestmark = pytest.mark.anyio

RELEASE = "Falcon's release train leaves every second Tuesday"
SPELLING = "The user writes British spelling: colour, organise"


async def _contents(session: ClientSession, query: str, **arguments: object) -> dict[str, str]:
    """Content -> scope of each hit of a search."""
    found = await call(session, "search", query=query, detail=True, **arguments)
    return {hit["content"]: hit["scope"] for hit in found["results"]}


async def _resource(session: ClientSession, uri: str) -> str:
    return (await session.read_resource(uri)).contents[0].text  # type: ignore[union-attr]


async def test_a_scoped_server_writes_and_reads_its_scope_and_another_server_does_not_see_it(
    tmp_path: Path, models_dir: Path
) -> None:
    data = tmp_path / "data"
    async with stdio_session(data, models_dir) as plain:
        await call(plain, "remember", content=SPELLING)  # global: this server owns the stores now
        async with (
            stdio_session(data, models_dir, "--scope", "project:falcon") as falcon,
            connect_stdio(
                PYTHON,
                ["-m", "hippograph", "serve"],
                server_env(data, models_dir, HIPPOGRAPH_SCOPE="project:hack"),
            ) as hack,
        ):
            written = await call(falcon, "remember", content=RELEASE, entities=["Falcon"])

            # The scoped server reads its scope plus global, without naming either.
            seen = await _contents(falcon, "when does the Falcon release train leave")
            assert seen[RELEASE] == "project:falcon"
            assert (await _contents(falcon, "british spelling colour"))[SPELLING] == "global"
            assert RELEASE in await _resource(falcon, "memory://context/Falcon%20release%20train")
            assert written["id"] in await _resource(falcon, "memory://entity/Falcon")

            # Neither the global server nor another project's sees it; a call may still name it.
            for other in (plain, hack):
                assert RELEASE not in await _contents(other, "when does the Falcon release train leave")
            assert (await _contents(hack, "british spelling colour"))[SPELLING] == "global"
            named = await _contents(plain, "Falcon release train", scope="project:falcon")
            assert named[RELEASE] == "project:falcon"

            # correct's query looks in the server's scope too, and the correction stays there.
            fixed = await call(
                falcon, "correct", query="release train", content=RELEASE.replace("Tues", "Thurs")
            )
            assert fixed["corrected"] == written["id"]
            seen = await _contents(falcon, "when does the Falcon release train leave")
            assert seen[RELEASE.replace("Tues", "Thurs")] == "project:falcon"


def test_an_invalid_default_scope_is_refused_before_serving(tmp_path: Path, models_dir: Path) -> None:
    result = run_cli(tmp_path / "data", models_dir, "serve", "--scope", "project falcon")
    assert result.returncode == 2
    assert "scope 'project falcon' is not valid" in result.stderr
    assert not (tmp_path / "data").exists()
