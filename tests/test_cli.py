"""The console script in process: its arguments (every one says what it is for), and a Ctrl-C
while it builds its tools.

(The console script run as a user would, in real processes: tests/e2e/test_cli.py.)"""

from __future__ import annotations

import argparse
import os
import signal
import time

import pytest

from hippograph.__main__ import one_blas_thread
from hippograph.cli import build_parser
from hippograph.listening import interrupt_deferred


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
