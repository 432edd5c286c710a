"""The README cannot drift from the code: every setting is in its table with its variable and
default, and every command line it shows parses against the CLI (issue 25)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from hippograph.cli import build_parser
from hippograph.config import Settings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _settings_table() -> dict[str, str]:
    """The README's settings table: variable -> its default cell."""
    section = README.split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(HIPPOGRAPH_[A-Z_]+)` \| (.*?) \|", section, flags=re.MULTILINE)
    return dict(rows)


def _shown(value: object) -> str:
    """A default as the README writes it (7.0 as 7, 3600.0 as 3600)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@pytest.mark.parametrize("name", sorted(Settings.model_fields))
def test_every_setting_is_in_the_readme_with_its_variable_and_default(name: str) -> None:
    field: FieldInfo = Settings.model_fields[name]
    variable = f"HIPPOGRAPH_{name.upper()}"
    table = _settings_table()
    assert variable in table, f"{variable} is not in the README's settings table"
    cell = table[variable]
    if field.default_factory is not None:
        return  # a per-user path: the README names it in the user's terms
    if field.default is None:
        assert cell.startswith("unset"), f"{variable}'s default is unset, the README says {cell}"
    else:
        assert field.default is not PydanticUndefined
        assert cell.startswith(f"`{_shown(field.default)}`"), f"{variable}: {cell} for {field.default!r}"


def test_the_readme_lists_no_setting_that_does_not_exist() -> None:
    known = {f"HIPPOGRAPH_{name.upper()}" for name in Settings.model_fields}
    assert set(_settings_table()) - known == set()


def _command_lines() -> list[str]:
    """Each `hippograph ...` line of the README's bash blocks, without its comment."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command.startswith("hippograph "):
                lines.append(command.split(" < ", 1)[0])
    return lines


@pytest.mark.parametrize("line", _command_lines())
def test_every_command_the_readme_shows_parses(line: str) -> None:
    words = shlex.split(line.replace("[", "").replace("]", ""))[1:]  # optional parts included
    build_parser().parse_args(words)  # argparse exits (SystemExit) on a command or flag it does not know
