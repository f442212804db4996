"""The one error tree of dynamics-memory.

Every error a user can meet derives from ``DynmemError`` and carries a stable ``code``
(the bridge maps classes to HTTP status codes in one table; the CLI prints
``error[code]: message``). Adapters translate library exceptions at the edge
(``raise StoreError(msg) from exc``); ``sqlite3``, ``faiss`` and ``openai`` errors never
escape ``actors/``.

    DynmemError
    ├── InvalidInput            bad request or file content (400/422)
    │   ├── MalformedHistory    a JSONL line that is not a turn
    │   ├── FutureTimestamp     a turn dated beyond now + the allowed clock skew
    │   └── EmptyQuery
    ├── NotFound                unknown memory, review, job, unit (404)
    ├── Conflict                request id reused with other content; decided review (409)
    ├── AuthError               missing or wrong token (401)
    │   └── Forbidden           right token, wrong capability (403)
    ├── PayloadTooLarge         (413)
    ├── ScopeViolation          a read or write across scopes (403)
    ├── BudgetExceeded          a repair job ran out of tool calls or characters (429)
    ├── RateLimited             (429)
    ├── StoreError              SQLite or file-system failure (503)
    │   ├── DataDirError        data directory missing, unreadable or unwritable
    │   └── StoreLocked         another process writes this data directory (one writer per store)
    ├── IndexError_             FAISS or embedder failure (503)
    ├── ModelError              model endpoint failure (503)
    │   ├── ModelTimeout
    │   ├── ModelUnavailable    circuit open, endpoint down
    │   └── ModelBadReply       reply that does not validate
    ├── ServiceUnavailable      an actor is down or not started (503)
    │   ├── ActorDied           an actor died during the call (it is restarted; retry)
    │   └── Overloaded          the sidecar has as much work as it admits; retry after Retry-After
    └── PackageConflict         another distribution shadows one of our top-level packages (bridge/packages.py)
"""

from __future__ import annotations

from typing import Any


def _rebuild(cls: type[DynmemError], args: tuple[Any, ...], state: dict[str, Any]) -> DynmemError:
    """Unpickles an error without calling its ``__init__`` (whose signature a subclass may change)."""
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class DynmemError(Exception):
    """Root of every error raised on purpose by dynamics-memory.

    Pickling keeps the class, the arguments and every attribute (``message`` and whatever a
    subclass adds, such as ``EndpointRejected.status``), so an error raised inside a Ray actor
    reaches the caller whole.
    """

    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, tuple[type[DynmemError], tuple[Any, ...], dict[str, Any]]]:
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class InvalidInput(DynmemError):
    code = "invalid_input"


class MalformedHistory(InvalidInput):
    code = "malformed_history"


class FutureTimestamp(InvalidInput):
    code = "future_timestamp"


class EmptyQuery(InvalidInput):
    code = "empty_query"


class NotFound(DynmemError):
    code = "not_found"


class Conflict(DynmemError):
    code = "conflict"


class AuthError(DynmemError):
    code = "unauthorized"


class Forbidden(AuthError):
    code = "forbidden"


class PayloadTooLarge(DynmemError):
    code = "payload_too_large"


class ScopeViolation(DynmemError):
    code = "scope_violation"


class BudgetExceeded(DynmemError):
    code = "budget_exceeded"


class RateLimited(DynmemError):
    code = "rate_limited"


class StoreError(DynmemError):
    code = "store_error"


class DataDirError(StoreError):
    code = "data_dir"


class StoreLocked(StoreError):
    code = "store_locked"


class IndexError_(DynmemError):
    code = "index_error"


class ModelError(DynmemError):
    code = "model_error"


class ModelTimeout(ModelError):
    code = "model_timeout"


class ModelUnavailable(ModelError):
    code = "model_unavailable"


class ModelBadReply(ModelError):
    code = "model_bad_reply"


class ServiceUnavailable(DynmemError):
    code = "unavailable"


class ActorDied(ServiceUnavailable):
    code = "actor_died"


class Overloaded(ServiceUnavailable):
    """Admission control refused the request (nothing was done); the client retries later."""

    code = "overloaded"
    #: Seconds a client should wait before trying again (the HTTP ``Retry-After`` header).
    retry_after_s = 1


class PackageConflict(DynmemError):
    code = "package_conflict"
