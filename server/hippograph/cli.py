"""The ``hippograph`` console script: the composition root.

It reads settings once (environment, then flags on top) and runs the command named, as
``commands.COMMANDS`` declares it (its arguments, help, work and properties). Exit codes: 0 ok,
1 a command failed, 2 bad usage or an unusable data dir (nothing was touched).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hippograph import __version__
from hippograph.commands import COMMANDS, Command
from hippograph.config import Settings, default_data_dir
from hippograph.store.malloc_arenas import limit_malloc_arenas, map_large_allocations

_BY_NAME = {command.name: command for command in COMMANDS}
_DEFAULT = "serve"  # the command run when none is named


def build_parser() -> argparse.ArgumentParser:
    """The command line: every command in ``COMMANDS``, its arguments and their help."""
    parser = argparse.ArgumentParser(
        prog="hippograph", description=f"Long-term graph memory over MCP. With no command: {_DEFAULT}."
    )
    parser.add_argument("--version", action="version", version=f"hippograph {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    for options in (parser, common):  # before the command or after it: "--data-dir X stats"
        _common_options(options)
    sub = parser.add_subparsers(dest="command")
    for command in COMMANDS:
        command.add_arguments(
            sub.add_parser(
                command.name,
                parents=[common],
                help=command.help,
                description=command.description,
                formatter_class=argparse.RawDescriptionHelpFormatter,  # keeps the about's lines
            )
        )
    return parser


def _common_options(parser: argparse.ArgumentParser) -> None:
    """The options every command takes; left out of the namespace unless given, so that one given
    before the command is not overwritten by the command's default."""
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=argparse.SUPPRESS,
        help=f"where the memory lives (env HIPPOGRAPH_DATA_DIR; default {default_data_dir()})",
    )
    parser.add_argument(
        "--store-url",
        default=argparse.SUPPRESS,
        help="a PostgreSQL database that holds the memory, postgresql://user:pass@host:5432/db (env "
        "HIPPOGRAPH_STORE_URL, better for a password; default: the data dir's own files)",
    )
    parser.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        default=argparse.SUPPRESS,
        help="log to stderr from this level (env HIPPOGRAPH_LOG_LEVEL; default INFO for serve, else WARNING)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="log progress to stderr (as --log-level INFO)",
    )


def _said(err: ValidationError) -> str:
    """What a settings error says, each field's message once, without pydantic's wrapping."""
    said = []
    for error in err.errors():
        field, message = ".".join(map(str, error["loc"])), error["msg"].removeprefix("Value error, ")
        said.append(message if message.startswith(field) else f"{field}: {message}")
    return "; ".join(said)


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {
        key: value
        for key in ("data_dir", "store_url", "log_level", "transport", "host", "port", "scope")
        if (value := getattr(args, key, None)) is not None
    }
    return Settings(**overrides)


def _no_memory(data_dir: Path) -> str:
    where = "does not exist" if not data_dir.exists() else "holds no hippograph memory"
    return (
        f"the data dir {data_dir} {where}. Check --data-dir or HIPPOGRAPH_DATA_DIR; to start a new "
        "memory there, run `hippograph serve` (an MCP client's remember writes it) or "
        "`hippograph import FILE`. Nothing was created."
    )


def _log_level(command: Command, args: argparse.Namespace, settings: Settings) -> str:
    """A flag, else the environment, else the command's own (``Command.log_level``)."""
    if getattr(args, "log_level", None) is None and getattr(args, "verbose", False):
        return "INFO"
    return settings.log_level or command.log_level


class _PerSessionToDebug(logging.Filter):
    """The MCP SDK's line per HTTP session (created, terminated, idle) is DEBUG here, not INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger().isEnabledFor(logging.DEBUG)
        return True


_PER_SESSION_TO_DEBUG = _PerSessionToDebug()


def _configure_logging(level: str) -> None:
    # stderr only: on stdio, stdout carries the protocol.
    logging.basicConfig(
        stream=sys.stderr, level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # One line per request to the owner's socket (httpx2) or an HTTP client: noise at any level.
    for noisy in ("httpx", "httpx2", "fastembed", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for per_session in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
        logging.getLogger(per_session).addFilter(_PER_SESSION_TO_DEBUG)  # once, however often called


def main(argv: Sequence[str] | None = None) -> int:
    limit_malloc_arenas()  # before any engine starts a thread
    map_large_allocations()
    args = build_parser().parse_args(argv)
    command = _BY_NAME[args.command or _DEFAULT]
    try:
        settings = _settings(args)
    except ValidationError as err:  # what was wrong, without pydantic's wrapping and links
        print(f"hippograph: invalid setting: {_said(err)}", file=sys.stderr)
        return command.exit_unusable
    except ValueError as err:
        print(f"hippograph: invalid setting: {err}", file=sys.stderr)
        return command.exit_unusable
    _configure_logging(_log_level(command, args, settings))
    if not command.creates and settings.store_url is None and not settings.graph_file.exists():
        print(f"hippograph: {_no_memory(settings.data_dir)}", file=sys.stderr)
        return command.exit_unusable
    # Every file the stores create is this user's alone (the data dir is 0700 as well).
    os.umask(0o077)
    try:
        code = command.run(args, settings, command.open_memory)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except BrokenPipeError:  # "hippograph stats | head -3": the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())
