"""The console script's arguments, read in process: every one says what it is for.

(The console script run as a user would, in real processes: tests/e2e/test_cli.py.)"""

from __future__ import annotations

import argparse

from hippograph.cli import build_parser


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
