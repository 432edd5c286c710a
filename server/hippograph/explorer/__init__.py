"""The graph explorer: a local web page to look at what memory holds, and to curate it.

``app`` is the page and its JSON API over any ``MemoryAPI`` (reads: the subgraph around the
newest facts, search, explain; ``actions``: confirm, correct and forget from the page), and
``serving`` binds its socket and runs it with uvicorn on loopback. Through ``SharedMemory`` it
reads and acts on whichever process owns the stores, so it works while MCP servers run.
"""

from hippograph.explorer.app import LOOPBACK_HOSTS, build_app, static_dir
from hippograph.explorer.serving import DEFAULT_PORT, PortTaken, hosts_for, listen, serve, url, uvicorn_server

__all__ = [
    "DEFAULT_PORT",
    "LOOPBACK_HOSTS",
    "PortTaken",
    "build_app",
    "hosts_for",
    "listen",
    "serve",
    "static_dir",
    "url",
    "uvicorn_server",
]
