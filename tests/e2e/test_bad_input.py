"""Bad input over a real stdio server: a prompt request it got wrong is invalid params, and the
server's stderr holds no traceback.

(Every other case, over an in-process MCP client and in the service: tests/test_bad_input.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from testkit.client import stdio_session

pytestmark = pytest.mark.anyio


async def test_a_bad_prompt_request_over_stdio_is_invalid_params(tmp_path: Path, models_dir: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        async with stdio_session(tmp_path / "data", models_dir, errlog=err) as session:
            for name, arguments in (("what_do_you_know", {}), ("nope", {})):
                with pytest.raises(MCPError) as refused:
                    await session.get_prompt(name, arguments)
                assert refused.value.error.code == INVALID_PARAMS, refused.value.error
            good = await session.get_prompt("save_decisions", {})
            assert good.messages
    assert "Traceback" not in errlog.read_text()
