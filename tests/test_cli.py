"""The console script in process: its arguments (every one says what it is for), and a Ctrl-C
while it builds its tools.

(The console script run as a user would, in real processes: tests/e2e/test_cli.py.)"""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path

import pytest

from hippograph import commands
from hippograph.__main__ import one_blas_thread
from hippograph.cli import build_parser, main
from hippograph.config import Settings
from hippograph.listening import interrupt_deferred
from hippograph.service.memory import Memory


def test_every_argument_of_every_command_says_what_it_is_for() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    undocumented = [
        f"{name} {action.dest}"
        for name, sub in subparsers.choices.items()
        for action in sub._actions
        if not action.help
    ]
    assert undocumented == []
    assert sorted(action.dest for action in subparsers._choices_actions if not action.help) == []


def test_a_ctrl_c_while_the_tools_are_built_is_raised_once_they_are() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), interrupt_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here; pydantic would have turned a raise into a SchemaError
        done.append(True)
    assert done == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with interrupt_deferred():  # nothing caught: nothing raised
        done.append(True)


def test_the_command_keeps_numpy_on_one_blas_thread_unless_the_user_set_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2"


def test_the_common_options_go_before_the_command_or_after_it() -> None:
    parser = build_parser()
    assert parser.parse_args(["--data-dir", "/m/a", "stats"]).data_dir == Path("/m/a")
    assert parser.parse_args(["stats", "--data-dir", "/m/b"]).data_dir == Path("/m/b")
    assert parser.parse_args(["--data-dir", "/m/a", "stats", "--data-dir", "/m/b"]).data_dir == Path("/m/b")
    assert not hasattr(parser.parse_args(["stats"]), "data_dir")  # the environment's, then the default


def test_a_bad_setting_is_said_without_pydantic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "dog", "--scope", "Project Eelgrass", "--data-dir", str(tmp_path)]) == 2
    said = capsys.readouterr().err
    assert said.startswith("hippograph: invalid setting: scope 'Project Eelgrass' is not valid: use 'global'")
    assert "pydantic" not in said and "validation error" not in said


def test_search_on_the_command_line_prints_its_notes(
    memory: Memory, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    memory.remember("The hallway was painted navy blue in May.")
    args = argparse.Namespace(query="Which bank does Bartholomew use?", limit=5, json=False)
    commands._search(args, memory, settings)  # type: ignore[arg-type]  # Memory answers as SharedMemory
    assert "note: no confident match" in capsys.readouterr().out
