"""The errors hippograph raises on purpose.

    HippographError                 base: message says what was wrong and what to do instead
    ├── InvalidInput                a caller sent something we cannot store or answer
    │   └── SecretDetected          content holds a credential; nothing was written
    ├── NotFound                    an id or name that does not exist (in this scope)
    ├── InvalidTransition           a lifecycle change the fact's state forbids
    ├── InternalError               hippograph broke a rule of its own code: a bug, not the input
    └── StoreError                  the data dir cannot be used
        ├── GraphCacheFull          the graph engine's page cache could not hold one call's work
        ├── Closing                 the memory is closing: the call did not run; send it again
        ├── DataDirNotWritable
        ├── SchemaTooNew            written by a newer hippograph: we refuse to touch it
        └── ModelUnavailable        the embedding model cannot be loaded

The MCP layer turns every HippographError into a tool error the model can read; any other
exception is a bug and reaches the client only as "Error executing tool".
"""


class HippographError(Exception):
    """Base of every anticipated failure; ``str(err)`` is safe to show a caller."""


class InvalidInput(HippographError):
    pass


class SecretDetected(InvalidInput):
    pass


class NotFound(HippographError):
    pass


class InvalidTransition(HippographError):
    pass


class InternalError(HippographError):
    pass


class StoreError(HippographError):
    pass


class DiskFull(StoreError):
    pass


class Closing(StoreError):
    """The memory is closing: the call was not run (another owner will run it)."""


class GraphCacheFull(StoreError):
    # Whether room was made after the failure (the cache written to disk, or made larger), so the
    # same write, sent again, may fit.
    room_made: bool = False


class IndexDamaged(StoreError):
    pass


class DataDirNotWritable(StoreError):
    pass


class SchemaTooNew(StoreError):
    pass


class ModelUnavailable(StoreError):
    pass
