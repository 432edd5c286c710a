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
from hippograph.config import Settings, default_data_dir
from hippograph.domain.errors import HippographError, InternalError, StoreError
from hippograph.store.malloc_arenas import limit_malloc_arenas

if TYPE_CHECKING:
    from hippograph.sharing.proxy import SharedMemory

log = logging.getLogger("hippograph")

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """The command line: every command, its arguments and their help."""
    parser = argparse.ArgumentParser(prog="hippograph", description="Long-term graph memory over MCP.")
    parser.add_argument("--version", action="version", version=f"hippograph {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        type=Path,
        help=f"where the memory lives (env HIPPOGRAPH_DATA_DIR; default {default_data_dir()})",
    )
    common.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log to stderr from this level (env HIPPOGRAPH_LOG_LEVEL; default INFO for serve, else WARNING)",
    )
    common.add_argument(
        "-v", "--verbose", action="store_true", help="log progress to stderr (as --log-level INFO)"
    )
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
    search.add_argument("query", help="what to look for, in words")
    search.add_argument("--limit", type=int, default=10, help="most results to print (default 10)")
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
    forget.add_argument("fact_id", help="the fact's id, as search prints it")
    forget.add_argument(
        "--scope",
        help="the scope the fact is in, as search's --scope: another scope's fact is not found "
        "(env HIPPOGRAPH_SCOPE; default global)",
    )
    forget.add_argument("--reason", help="why (kept with the retracted fact; not with --purge)")
    forget.add_argument(
        "--purge", action="store_true", help="erase the fact's text from every file of the data dir"
    )
    forget.add_argument("--json", action="store_true", help="print JSON")

    export = sub.add_parser("export", parents=[common], help="write all of memory as JSON Lines")
    export.add_argument("--out", type=Path, help="file to write (default: stdout)")

    imp = sub.add_parser("import", parents=[common], help="read memory from a JSON Lines file")
    imp.add_argument("file", type=Path, help="the JSON Lines file to read")
    imp.add_argument(
        "--format",
        choices=["hippograph", "mcp-memory"],
        default="hippograph",
        help="hippograph (our export, the default) or mcp-memory (the reference MCP memory server's file)",
    )
    imp.add_argument("--scope", help="scope for mcp-memory imports (env HIPPOGRAPH_SCOPE; default global)")
    imp.add_argument("--json", action="store_true", help="print JSON")

    explore = sub.add_parser(
        "explore", parents=[common], help="browse and curate memory in a local web page (servers may run)"
    )
    explore.add_argument("--host", help="bind address (default 127.0.0.1)")
    explore.add_argument("--port", type=int, default=8766, help="port (default 8766)")
    explore.add_argument(
        "--scope", help="scope the page shows first, with global (env HIPPOGRAPH_SCOPE; default global)"
    )

    doctor = sub.add_parser("doctor", parents=[common], help="check the stores agree; repair and report")
    doctor.add_argument("--json", action="store_true", help="print JSON")

    stats = sub.add_parser("stats", parents=[common], help="counts of what memory holds")
    stats.add_argument("--json", action="store_true", help="print JSON")

    hook = sub.add_parser(
        "hook", parents=[common], help="answer a client's hook event on stdin: recall at start, capture after"
    )
    hook.add_argument("client", choices=["claude-code"], help="the client whose hook JSON arrives on stdin")

    capture = sub.add_parser(
        "capture", parents=[common], help="store a transcript's new turns as session episodes"
    )
    capture.add_argument("file", type=Path, help="JSON Lines of {role, content}, or Claude Code's")
    capture.add_argument("--session", help="session id (default: one per file)")
    capture.add_argument("--scope", help="scope of the episodes (default global)")
    capture.add_argument(
        "--format",
        choices=["plain", "claude-code"],
        default="plain",
        help="plain (JSONL of role, content) or claude-code (its transcript JSONL)",
    )
    capture.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {
        key: value
        for key in ("data_dir", "log_level", "transport", "host", "port", "scope")
        if (value := getattr(args, key, None)) is not None
    }
    return Settings(**overrides)


# The commands that create a memory where there is none; every other one needs one to exist
# (a typo in --data-dir must not leave an empty memory behind and report it).
_CREATING = frozenset({"serve", "import", "capture", "hook"})  # capture and hook write turns


# The commands that embed text as a rule: the model loads while the stores open. The others
# load it only if they turn out to need it (a reconcile after a crash), and stats takes ~1/3 less.
_EMBEDDING = frozenset({"search", "import", "capture", "hook"})


def _no_memory(data_dir: Path) -> str:
    where = "does not exist" if not data_dir.exists() else "holds no hippograph memory"
    return (
        f"the data dir {data_dir} {where}. Check --data-dir or HIPPOGRAPH_DATA_DIR; to start a new "
        "memory there, run `hippograph serve` (an MCP client's remember writes it) or "
        "`hippograph import FILE`. Nothing was created."
    )


def _log_level(command: str, args: argparse.Namespace, settings: Settings) -> str:
    """A flag, else the environment, else INFO for a server (its log is its record) and WARNING
    for a one-shot command (its output is the answer; progress is noise unless asked for)."""
    if getattr(args, "log_level", None) is None and getattr(args, "verbose", False):
        return "INFO"
    return settings.log_level or ("INFO" if command == "serve" else "WARNING")


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
    args = build_parser().parse_args(argv)
    command = args.command or "serve"
    try:
        settings = _settings(args)
    except ValueError as err:
        print(f"hippograph: invalid setting: {err}", file=sys.stderr)
        return EXIT_FAILED if command == "hook" else EXIT_UNUSABLE  # 2 would block a Stop hook
    _configure_logging(_log_level(command, args, settings))
    if command not in _CREATING and not settings.graph_file.exists():
        print(f"hippograph: {_no_memory(settings.data_dir)}", file=sys.stderr)
        return EXIT_UNUSABLE
    # Every file the stores create is this user's alone (the data dir is 0700 as well).
    os.umask(0o077)

    if command == "explore":  # says its address before loading the database engines
        return _explore(args, settings)

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
        if command == "serve":
            memory = SharedMemory.serve(settings)
        else:
            memory = SharedMemory.open(settings, preload_model=command in _EMBEDDING)
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


def _explore(args: argparse.Namespace, settings: Settings) -> int:
    """The explorer: its port first (taken: say so, exit 2), its address at once, then the memory.

    It joins the data dir as a server does: through the owner's API while another process owns
    the stores (an MCP server, always, for a desktop client's user), else owning them itself,
    opened in the background (the page's first requests wait for it).
    """
    from hippograph import explorer

    host = args.host or "127.0.0.1"
    try:
        sock = explorer.listen(host, args.port)
    except explorer.PortTaken as err:
        print(f"hippograph: {err}", file=sys.stderr)
        return EXIT_UNUSABLE
    # The address is the command's output, whatever the log level; stdout stays clean.
    print(
        f"hippograph explorer: {explorer.url(host, args.port)} (Ctrl-C to stop)", file=sys.stderr, flush=True
    )
    from hippograph.sharing.proxy import SharedMemory  # deferred: loads the database engines

    try:
        memory = SharedMemory.serve(settings)
    except StoreError as err:
        sock.close()
        print(f"hippograph: {err}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        explorer.serve(memory, sock, host=host, scope=settings.scope)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a requested stop
        log.info("stopped")
    finally:
        memory.close()
        sock.close()
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
            if settings.transport == "stdio" and sys.stdin.isatty():
                # Run by hand, a stdio server looks hung: say what it waits for (on stderr:
                # stdout is the protocol). A client starts it with pipes and never sees this.
                print(
                    "hippograph: this MCP server waits for an MCP client on stdin; a client starts "
                    "`hippograph serve` itself (see 'Use it from your client' in the README). "
                    "Ctrl-C stops it.",
                    file=sys.stderr,
                    flush=True,
                )
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
        from hippograph.service.shaping import utcnow
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
        forgotten = memory.forget(args.fact_id, reason=args.reason, purge=args.purge, scope=settings.scope)
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
