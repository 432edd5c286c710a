"""The ``hippograph`` commands: each one's arguments, help and work, registered once in ``COMMANDS``.

A ``Command`` declares a name and a line of help, a function adding its arguments, a function
running it, and what ``cli.main`` needs to know of it: does it create a memory where there is
none, does it embed text as a rule, is it a server. Most commands work on an open memory:
``_on_memory`` opens it for them and closes it after. Exit codes: 0 ok, 1 a command failed,
2 bad usage or an unusable data dir (nothing was touched).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippograph import __version__
from hippograph.config import Settings, is_loopback
from hippograph.domain.errors import HippographError, StoreError

if TYPE_CHECKING:
    from hippograph.sharing.proxy import SharedMemory

log = logging.getLogger("hippograph")

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2

OpenMemory = Callable[[Settings], "SharedMemory"]
# A command's whole run; it opens the memory (with the opener main passes) when it needs it.
Run = Callable[[argparse.Namespace, Settings, OpenMemory], int]
# A command's work on a memory already open.
Work = Callable[[argparse.Namespace, "SharedMemory", Settings], int]


@dataclass(frozen=True)
class Command:
    """One subcommand, declared once: ``cli.build_parser`` adds it, ``cli.main`` runs it."""

    name: str
    help: str  # what it does, in a line: in ``hippograph --help`` and atop its own --help
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Run
    about: str = ""  # more for its own --help, below the help line
    # Creates a memory where there is none (the others need one: a mistyped --data-dir is an error).
    creates: bool = False
    # Embeds text as a rule: the model loads while the stores open (the others only if needed).
    embeds: bool = False
    # A server: its stores (and the model) open in the background, so it answers before they do.
    serves: bool = False
    # Unless a flag or the environment says: a server's log is its record; a command's, noise.
    log_level: str = "WARNING"
    # What a refusal before the start exits with (hook: 1, as 2 would block a Stop hook).
    exit_unusable: int = EXIT_UNUSABLE

    @property
    def description(self) -> str:
        return f"{self.help}\n\n{self.about}" if self.about else self.help

    def open_memory(self, settings: Settings) -> SharedMemory:
        """The data dir's memory, joined as this command needs it."""
        from hippograph.sharing.proxy import SharedMemory  # deferred: loads the database engines

        if self.serves:
            return SharedMemory.serve(settings)
        return SharedMemory.open(settings, preload_model=self.embeds)


def _on_memory(work: Work) -> Run:
    """A command doing ``work`` on the memory: opened for it (an unusable store: exit 2), a
    failure said in one line (exit 1), closed after."""

    def run(args: argparse.Namespace, settings: Settings, open_memory: OpenMemory) -> int:
        try:
            memory = open_memory(settings)
        except StoreError as err:
            print(f"hippograph: {err}", file=sys.stderr)
            return EXIT_UNUSABLE
        try:
            return work(args, memory, settings)
        except HippographError as err:
            print(f"hippograph: {err}", file=sys.stderr)
            return EXIT_FAILED
        finally:
            memory.close()

    return run


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


def _json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


_SERVE_ABOUT = """\
transports (--transport, env HIPPOGRAPH_TRANSPORT):
  stdio  the default: MCP on stdin/stdout, for the MCP client that starts it
  http   streamable HTTP at http://HOST:PORT/mcp
  sse    server-sent events at http://HOST:PORT/sse
HOST is 127.0.0.1 and PORT 8765 unless --host and --port (or HIPPOGRAPH_HOST
and HIPPOGRAPH_PORT) say otherwise. Off loopback, set HIPPOGRAPH_TOKEN: clients
send it as `Authorization: Bearer <token>`. It runs until its stdio client
leaves, or Ctrl-C or SIGTERM."""


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--transport",
        choices=["stdio", "sse", "http"],
        help="how clients reach it, as above (env HIPPOGRAPH_TRANSPORT; default stdio)",
    )
    parser.add_argument("--host", help="bind address for sse/http (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port for sse/http (default 8765)")
    parser.add_argument(
        "--scope",
        help="default scope of calls that name none, e.g. project:falcon "
        "(env HIPPOGRAPH_SCOPE; default global)",
    )


def _serve(args: argparse.Namespace, settings: Settings, open_memory: OpenMemory) -> int:
    # Imported before the stores start opening in the background: both are CPU-bound
    # Python, and the server should be ready to answer the client first.
    import hippograph.transports  # noqa: F401

    if settings.transport != "stdio" and not is_loopback(settings.host) and settings.token is None:
        print(
            f"hippograph: refusing to serve on {settings.host} without a token: anyone who can reach it "
            "could read and change your memory. Set HIPPOGRAPH_TOKEN, or bind 127.0.0.1.",
            file=sys.stderr,
        )
        return EXIT_UNUSABLE
    return _on_memory(_serving)(args, settings, open_memory)


def _serving(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    from hippograph import listening, transports
    from hippograph.mcp_app import build_server

    log.info(
        "hippograph %s serving %s from %s, default scope %s",
        __version__,
        settings.transport,
        settings.data_dir,
        settings.scope,
    )
    try:
        if settings.transport == "stdio" and sys.stdin.isatty():
            # Run by hand, a stdio server looks hung: say so (stderr; a client's pipes never see it).
            print(
                "hippograph: this MCP server waits for an MCP client on stdin; a client starts "
                "`hippograph serve` itself (see 'Use it from your client' in the README). "
                "Ctrl-C stops it.",
                file=sys.stderr,
                flush=True,
            )
        with listening.interrupt_deferred():
            server = build_server(memory, scope=settings.scope)
        transports.run(server, settings)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a requested stop, not a failure
        log.info("stopped")
    if memory.still_opening:
        # Stopped before the stores finished opening (seconds, at 100k facts): no call was
        # answered, so nothing is lost by not waiting; an open cut short is safe (as kill -9).
        log.info("stopped before the memory finished opening")
        logging.shutdown()
        os._exit(EXIT_OK)
    return EXIT_OK


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="what to look for, in words")
    parser.add_argument("--limit", type=int, default=10, help="most results to print (default 10)")
    parser.add_argument("--scope", help="search this scope and global (env HIPPOGRAPH_SCOPE; default global)")
    _json_argument(parser)


def _search(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    out = memory.search(args.query, limit=args.limit, scope=settings.scope)
    if args.json:
        print(out.model_dump_json(indent=2))
        return EXIT_OK
    for i, hit in enumerate(out.results, 1):
        print(f"{i:>2}. [{hit.id}] {hit.content}  ({hit.kind}, {hit.status}, score {hit.score:.4f})")
    if not out.results:
        print("no results")
    for note in out.notes:  # "no confident match ...": as much a part of the answer as the hits
        print(f"note: {note}")
    return EXIT_OK


def _maintain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--now", help="judge decay and expiry as if it were this time (ISO 8601); changes are written"
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    _json_argument(parser)


def _maintain(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
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


def _consolidate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scope", help="only this scope's topics (default: every scope's)")
    parser.add_argument("--dry-run", action="store_true", help="print what would change; keep nothing")
    _json_argument(parser)


def _consolidate(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    with _working("consolidation: finding topics"):
        report = memory.consolidate(args.scope, dry_run=args.dry_run)
    if args.json:
        _print(report.model_dump(), True)
    would = "would be " if report.dry_run else ""
    for s in () if args.json else report.scopes:
        print(
            f"{s.scope}: {s.topics} topics hold {s.in_topics} of {s.facts} active facts; "
            f"{s.added} {would}added, {s.changed} {would}changed, {s.removed} {would}removed"
        )
    return EXIT_OK


def _forget_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fact_id", help="the fact's id, as search prints it")
    parser.add_argument(
        "--scope",
        help="the scope the fact is in, as search's --scope: another scope's fact is not found "
        "(env HIPPOGRAPH_SCOPE; default global)",
    )
    parser.add_argument("--reason", help="why (kept with the retracted fact; not with --purge)")
    parser.add_argument(
        "--purge", action="store_true", help="erase the fact's text from every file of the data dir"
    )
    _json_argument(parser)


def _forget(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    forgotten = memory.forget(args.fact_id, reason=args.reason, purge=args.purge, scope=settings.scope)
    if args.json:
        print(forgotten.model_dump_json(indent=2))
    else:
        print(f"{forgotten.id}: {forgotten.status}" + ("" if args.purge else f" ({forgotten.content})"))
        if forgotten.note:
            print(f"note: {forgotten.note}")
    return EXIT_OK


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, help="file to write (default: stdout)")


def _export(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    exported = memory.export()
    if args.out:
        args.out.write_text(exported["jsonl"], encoding="utf-8")
        print(", ".join(f"{k} {v}" for k, v in exported["report"].items()), file=sys.stderr)
    else:
        sys.stdout.write(exported["jsonl"])
    return EXIT_OK


def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the JSON Lines file to read")
    parser.add_argument(
        "--format",
        choices=["hippograph", "mcp-memory"],
        default="hippograph",
        help="hippograph (our export, the default) or mcp-memory (the reference MCP memory server's file)",
    )
    parser.add_argument("--scope", help="scope for mcp-memory imports (env HIPPOGRAPH_SCOPE; default global)")
    _json_argument(parser)


def _import(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    try:
        lines = args.file.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        print(f"hippograph: cannot read {args.file}: {err.strerror}", file=sys.stderr)
        return EXIT_FAILED
    with _working(f"importing {len(lines)} lines from {args.file.name} and indexing"):
        report = memory.import_lines(lines, args.format, settings.scope)
    _print(report, args.json)
    return EXIT_OK


def _explore_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8766, help="port (default 8766)")
    parser.add_argument(
        "--scope", help="scope the page shows first, with global (env HIPPOGRAPH_SCOPE; default global)"
    )


def _explore(args: argparse.Namespace, settings: Settings, open_memory: OpenMemory) -> int:
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
    try:
        memory = open_memory(settings)  # loads the database engines: after the address is out
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


def _doctor(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    with _working("checking the graph against the index, re-indexing what is missing"):
        checked = memory.doctor()
    _print(checked, args.json)
    return EXIT_OK


def _stats(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
    _print(memory.stats(), args.json)
    return EXIT_OK


def _hook_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", choices=["claude-code"], help="the client whose hook JSON arrives on stdin")


def _hook(args: argparse.Namespace, settings: Settings, open_memory: OpenMemory) -> int:
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


def _capture_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="JSON Lines of {role, content}, or Claude Code's")
    parser.add_argument("--session", help="session id (default: one per file)")
    parser.add_argument("--scope", help="scope of the episodes (default global)")
    parser.add_argument(
        "--format",
        choices=["plain", "claude-code"],
        default="plain",
        help="plain (JSONL of role, content) or claude-code (its transcript JSONL)",
    )
    _json_argument(parser)


def _capture(args: argparse.Namespace, memory: SharedMemory, settings: Settings) -> int:
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


# In the order ``hippograph --help`` lists them. capture and hook create a memory: they write turns.
COMMANDS = (
    Command(
        "serve",
        "run the MCP server: stdio (default), or HTTP at http://HOST:PORT/mcp or /sse",
        _serve_arguments,
        _serve,
        about=_SERVE_ABOUT,
        creates=True,
        serves=True,
        log_level="INFO",
    ),
    Command(
        "search",
        "search memory, as the search tool does",
        _search_arguments,
        _on_memory(_search),
        embeds=True,
    ),
    Command(
        "maintain",
        "run the maintenance pass: expiry, dormancy, cleanup",
        _maintain_arguments,
        _on_memory(_maintain),
    ),
    Command(
        "consolidate",
        "find the topics of memory's facts afresh (no fact changes)",
        _consolidate_arguments,
        _on_memory(_consolidate),
    ),
    Command(
        "forget", "forget a fact (--purge: erase its text for good)", _forget_arguments, _on_memory(_forget)
    ),
    Command("export", "write all of memory as JSON Lines", _export_arguments, _on_memory(_export)),
    Command(
        "import",
        "read memory from a JSON Lines file",
        _import_arguments,
        _on_memory(_import),
        creates=True,
        embeds=True,
    ),
    Command(
        "explore",
        "browse and curate memory in a local web page (servers may run)",
        _explore_arguments,
        _explore,
        serves=True,
    ),
    Command("doctor", "check the stores agree; repair and report", _json_argument, _on_memory(_doctor)),
    Command("stats", "counts of what memory holds", _json_argument, _on_memory(_stats)),
    Command(
        "hook",
        "answer a client's hook event on stdin: recall at start, facts and warnings for a prompt, "
        "capture after",
        _hook_arguments,
        _hook,
        creates=True,
        embeds=True,
        exit_unusable=EXIT_FAILED,
    ),
    Command(
        "capture",
        "store a transcript's new turns as session episodes",
        _capture_arguments,
        _on_memory(_capture),
        creates=True,
        embeds=True,
    ),
)
