"""One exception hierarchy for deepcite: every message says what was wrong and what to do."""

from __future__ import annotations


class DeepciteError(Exception):
    """Base class of every error deepcite raises on purpose."""

    http_status: int = 500


class ConfigError(DeepciteError):
    """A setting is missing or invalid."""

    http_status = 500


class InputError(DeepciteError):
    """The caller gave input deepcite cannot use (bad query, bad file, bad format)."""

    http_status = 400


class RequestError(InputError):
    """A request field is outside its limits (empty or too long query, ``k``, ``max_hops``, filters)."""

    http_status = 422


class IngestError(InputError):
    """A record or file could not be ingested; names the file and line."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line
        self.reason = message


class ForbiddenError(InputError):
    """The caller may read the thing but not change it: 403, saying who may."""

    http_status = 403


class OwnershipConflictError(InputError):
    """A write would replace a document (or answer) that belongs to other groups: 409, saying what to do."""

    http_status = 409


class CollectionNotFoundError(DeepciteError):
    """A named collection does not exist; the message lists the known collections."""

    http_status = 404

    def __init__(self, name: str, known: list[str]) -> None:
        listing = ", ".join(sorted(known)) if known else "none yet; create one with `deepcite ingest`"
        super().__init__(f"collection {name!r} does not exist (known collections: {listing})")
        self.name = name
        self.known = known


class StoreError(DeepciteError):
    """The search engine failed or was used against its contract."""


class CollectionBusyError(StoreError):
    """Another process holds the collection (the engine locks a shard for one process): 409, naming it."""

    http_status = 409


class CollectionDamagedError(StoreError):
    """A collection's files cannot be read: 503, saying what failed and how to recover."""

    http_status = 503

    def __init__(self, name: str, what: str) -> None:
        super().__init__(
            f"collection {name!r} is damaged ({what}); restore it from a backup, or re-ingest it with "
            f"`deepcite ingest <path> --collection {name} --rebuild`"
        )
        self.name = name
        self.what = what


class NoSpaceError(StoreError):
    """The data dir's file system has no room for a write: 507, saying how much is needed and free."""

    http_status = 507


class EmbedderError(DeepciteError):
    """The embedding model could not be loaded or called."""


class LLMError(DeepciteError):
    """The LLM endpoint failed after retries or answered something unusable."""

    http_status = 502


class LLMTimeoutError(LLMError):
    """The LLM did not answer within a call's deadline or what is left of the request's budget."""

    http_status = 504

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


class InsufficientEvidenceError(DeepciteError):
    """Generation was asked to answer from an empty context."""

    http_status = 422


class NotFoundError(DeepciteError):
    """A requested object (request id, practitioner) does not exist or has expired."""

    http_status = 404


def document_not_found(collection: str) -> NotFoundError:
    """The one 404 for a document that is missing or that the caller may not read (ids do not leak)."""
    return NotFoundError(
        f"no document with that id in collection {collection!r} that you may read; "
        "take the id from a search hit's or citation's doc_id"
    )
