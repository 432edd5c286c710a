"""The ``hippograph`` console script: the composition root.

It reads settings once (environment, then flags on top), opens ``Memory`` and hands it to
the MCP server or a one-shot command. Exit codes: 0 ok, 1 a command failed, 2 bad usage
or an unusable data dir (nothing was touched).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippograph import __version__
from hippograph.config import Settings
from hippograph.domain.errors import HippographError, InternalError, StoreError

if TYPE_CHECKING:
    from hippograph.sharing.proxy import SharedMemory

log = logging.getLogger("hippograph")

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hippograph", description="Long-term graph memory over MCP.")
    parser.add_argument("--version", action="version", version=f"hippograph {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", type=Path, help="data dir (env HIPPOGRAPH_DATA_DIR)")
    common.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    sub = parser.add_subparsers(dest="command")

    serve = sub.add_parser("serve", parents=[common], help="run the MCP server (default: stdio)")
    serve.add_argument("--transport", choices=["stdio", "sse", "http"], help="env HIPPOGRAPH_TRANSPORT")
    serve.add_argument("--host", help="bind address for sse/http (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port for sse/http (default 8765)")
    serve.add_argument(
        "--scope",
        help="default scope of calls that name none, e.g. project:falcon "
        "(env HIPPOGRAPH_SCOPE; default global)",
    )

    search = sub.add_parser("search", parents=[common], help="search memory, as the search tool does")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--scope", help="search this scope and global (env HIPPOGRAPH_SCOPE; default global)")
    search.add_argument("--json", action="store_true", help="print JSON")

    maintain = sub.add_parser(
        "maintain", parents=[common], help="run the maintenance pass: expiry, dormancy, cleanup"
    )
    maintain.add_argument(
        "--now", help="judge decay and expiry as if it were this time (ISO 8601); changes are written"
    )
    maintain.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    maintain.add_argument("--json", action="store_true", help="print JSON")

    forget = sub.add_parser(
        "forget", parents=[common], help="forget a fact (--purge: erase its text for good)"
    )
    forget.add_argument("fact_id")
    forget.add_argument("--reason", help="why (kept with the retracted fact; not with --purge)")
    forget.add_argument(
        "--purge", action="store_true", help="erase the fact's text from every file of the data dir"
    )
    forget.add_argument("--json", action="store_true", help="print JSON")

    export = sub.add_parser("export", parents=[common], help="write all of memory as JSON Lines")
    export.add_argument("--out", type=Path, help="file to write (default: stdout)")

    imp = sub.add_parser("import", parents=[common], help="read memory from a JSON Lines file")
    imp.add_argument("file", type=Path)
    imp.add_argument("--format", choices=["hippograph", "mcp-memory"], default="hippograph")
    imp.add_argument("--scope", help="scope for mcp-memory imports (env HIPPOGRAPH_SCOPE; default global)")
    imp.add_argument("--json", action="store_true", help="print JSON")

    explore = sub.add_parser("explore", parents=[common], help="browse the memory graph in a local web page")
    explore.add_argument("--host", help="bind address (default 127.0.0.1)")
    explore.add_argument("--port", type=int, default=8766, help="port (default 8766)")

    doctor = sub.add_parser("doctor", parents=[common], help="check the stores agree; repair and report")
    doctor.add_argument("--json", action="store_true", help="print JSON")

    stats = sub.add_parser("stats", parents=[common], help="counts of what memory holds")
    stats.add_argument("--json", action="store_true", help="print JSON")

    hook = sub.add_parser(
        "hook", parents=[common], help="answer a client's hook event on stdin: recall at start, capture after"
    )
    hook.add_argument("client", choices=["claude-code"])

    capture = sub.add_parser(
        "capture", parents=[common], help="store a transcript's new turns as session episodes"
    )
    capture.add_argument("file", type=Path, help="JSON Lines of {role, content}, or Claude Code's")
    capture.add_argument("--session", help="session id (default: one per file)")
    capture.add_argument("--scope", help="scope of the episodes (default global)")
    capture.add_argument("--format", choices=["plain", "claude-code"], default="plain")
    capture.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {
        key: value
        for key in ("data_dir", "log_level", "transport", "host", "port", "scope")
        if (value := getattr(args, key, None)) is not None
    }
    return Settings(**overrides)


def _configure_logging(level: str) -> None:
    # stderr only: on stdio, stdout carries the protocol.
    logging.basicConfig(
        stream=sys.stderr, level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("httpx", "fastembed", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = args.command or "serve"
    try:
        settings = _settings(args)
    except ValueError as err:
        print(f"hippograph: invalid setting: {err}", file=sys.stderr)
        return EXIT_FAILED if command == "hook" else EXIT_UNUSABLE  # 2 would block a Stop hook
    _configure_logging(settings.log_level)
    # Every file the stores create is this user's alone (the data dir is 0700 as well).
    os.umask(0o077)

    from hippograph.sharing.proxy import SharedMemory  # deferred: loads the database engines

    if command == "hook":
        return _run_hook(settings, SharedMemory.open)
    if command == "serve":
        # Imported before the stores start opening in the background: both are CPU-bound
        # Python, and the server should be ready to answer the client first.
        import hippograph.transports  # noqa: F401

    if command == "serve" and settings.transport != "stdio":
        from hippograph.config import is_loopback

        if not is_loopback(settings.host) and settings.token is None:
            print(
                f"hippograph: refusing to serve on {settings.host} without a token: anyone who can reach it "
                "could read and change your memory. Set HIPPOGRAPH_TOKEN, or bind 127.0.0.1.",
                file=sys.stderr,
            )
            return EXIT_UNUSABLE
    try:
        # A server answers the client before its stores are open: they open in the background.
        memory = SharedMemory.serve(settings) if command == "serve" else SharedMemory.open(settings)
    except StoreError as err:
        print(f"hippograph: {err}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        return _run_command(command, args, memory, settings)
    except HippographError as err:
        print(f"hippograph: {err}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        memory.close()


def _run_hook(settings: Settings, open_memory: Callable[[Settings], SharedMemory]) -> int:
    """A client's hook: never a traceback, and never exit 2, which Claude Code reads as "block
    this" (a Stop hook exiting 2 would keep the model talking): any failure is one line and 1."""
    from hippograph import capture

    try:
        capture.print_notes(capture.run_claude_code_hook(sys.stdin, sys.stdout, settings, open_memory))
    except HippographError as err:
        print(f"hippograph hook: {err}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as err:  # the top of a hook: Claude Code shows stderr, so say it in one line
        print(f"hippograph hook: failed: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


@contextmanager
def _working(description: str) -> Iterator[None]:
    """A spinner with elapsed time on stderr while a long command runs (stdout stays clean)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=Console(stderr=True)
    ) as progress:
        progress.add_task(description, total=None)
        yield


def _print(data: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2, default=str))
        return
    for key, value in data.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "-"
        print(f"{key}: {value}")


def _run_command(command: str, args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    if command == "serve":
        from hippograph.mcp_app import build_server
        from hippograph.transports import run

        log.info(
            "hippograph %s serving %s from %s, default scope %s",
            __version__,
            settings.transport,
            settings.data_dir,
            settings.scope,
        )
        try:
            run(build_server(memory, scope=settings.scope), settings)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a requested stop, not a failure
            log.info("stopped")
        return EXIT_OK
    if command == "search":
        out = memory.search(args.query, limit=args.limit, scope=settings.scope)
        if args.json:
            print(out.model_dump_json(indent=2))
            return EXIT_OK
        for i, hit in enumerate(out.results, 1):
            print(f"{i:>2}. [{hit.id}] {hit.content}  ({hit.kind}, {hit.status}, score {hit.score:.4f})")
        if not out.results:
            print("no results")
        return EXIT_OK
    if command == "maintain":
        from hippograph.service.memory import utcnow
        from hippograph.text.time_phrases import parse_time_bound

        now = parse_time_bound(args.now, utcnow(), end=False) if args.now else None
        with _working("maintenance: expiry, dormancy, cleanup"):
            maintained = memory.maintain(now, dry_run=args.dry_run)
        if args.json:
            _print(maintained.model_dump(), True)
            return EXIT_OK
        _print(maintained.model_dump(exclude={"changes"}), False)
        verb = "would become" if maintained.dry_run else "became"
        for change in maintained.changes:
            print(f"  [{change.id}] {change.status} {verb} {change.becomes}: {change.content[:60]}")
        return EXIT_OK
    if command == "forget":
        forgotten = memory.forget(args.fact_id, reason=args.reason, purge=args.purge)
        if args.json:
            print(forgotten.model_dump_json(indent=2))
        else:
            print(f"{forgotten.id}: {forgotten.status}" + ("" if args.purge else f" ({forgotten.content})"))
        return EXIT_OK
    if command == "export":
        exported = memory.export()
        if args.out:
            args.out.write_text(exported["jsonl"], encoding="utf-8")
            print(", ".join(f"{k} {v}" for k, v in exported["report"].items()), file=sys.stderr)
        else:
            sys.stdout.write(exported["jsonl"])
        return EXIT_OK
    if command == "import":
        try:
            lines = args.file.read_text(encoding="utf-8").splitlines()
        except OSError as err:
            print(f"hippograph: cannot read {args.file}: {err.strerror}", file=sys.stderr)
            return EXIT_FAILED
        with _working(f"importing {len(lines)} lines from {args.file.name} and indexing"):
            report = memory.import_lines(lines, args.format, settings.scope)
        _print(report, args.json)
        return EXIT_OK
    if command == "explore":
        from hippograph import explorer

        host = args.host or "127.0.0.1"
        # The page reads the graph directly, so this process must own the stores.
        memory.on_owner(lambda owned: explorer.serve(owned, host=host, port=args.port))
        return EXIT_OK
    if command == "doctor":
        with _working("checking the graph against the index, re-indexing what is missing"):
            checked = memory.doctor()
        _print(checked, args.json)
        return EXIT_OK
    if command == "stats":
        _print(memory.stats(), args.json)
        return EXIT_OK
    if command == "capture":
        from hippograph import capture

        captured = capture.capture_file(
            memory,
            args.file,
            session_id=args.session or capture.default_session(args.file),
            scope=args.scope or "global",
            format=args.format,
        )
        capture.print_notes(captured.skipped)
        _print(captured.summary(), args.json)
        return EXIT_OK
    raise InternalError(f"unhandled command {command}")


if __name__ == "__main__":
    sys.exit(main())
