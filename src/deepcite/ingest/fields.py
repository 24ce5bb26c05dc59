"""Turn one decoded JSON record into a :class:`Document`, with a clear reason when a field is wrong."""

from __future__ import annotations

from typing import Any

from deepcite.models import Document

# Record keys that map onto Document fields; every other key goes into Document.metadata.
_OPTIONAL_TEXT = ("doi", "section", "url", "source")
_KNOWN = frozenset({"title", "text", "pmid", "year", "acl", "metadata", *_OPTIONAL_TEXT})


class BadRecord(ValueError):
    """A record that cannot become a Document; the message says which field and why."""


def record_to_document(record: Any, *, id_key: str, source: str | None = None) -> Document:
    """A Document from a JSON object; ``id_key`` names its id field (``id`` or BEIR's ``_id``);
    ``source`` is used when the record names none."""
    if not isinstance(record, dict):
        raise BadRecord(f"expected a JSON object, got {type(record).__name__}")
    doc_id = _id(record.get(id_key), id_key)
    text = text_field(record, "text")
    if not text:
        raise BadRecord(f"record {doc_id!r} has missing or empty 'text'; every record needs the passage text")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise BadRecord(f"'metadata' must be an object, got {type(metadata).__name__}")
    extra = {k: v for k, v in record.items() if k not in _KNOWN and k != id_key}
    optional = {key: text_field(record, key) for key in _OPTIONAL_TEXT}
    return Document(
        id=doc_id,
        text=text,
        title=text_field(record, "title") or "",
        pmid=_id(record["pmid"], "pmid") if record.get("pmid") not in (None, "") else None,
        year=to_year(record.get("year"), "year"),
        acl=_acl(record.get("acl")),
        metadata={**metadata, **extra},
        **{**optional, "source": optional["source"] or source},
    )


def text_field(record: dict[str, Any], key: str) -> str | None:
    """``record[key]`` stripped, ``None`` when absent or blank; a non-string value is a bad record."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRecord(f"'{key}' must be a string, got {type(value).__name__}")
    return value.strip() or None


def to_year(value: Any, key: str) -> int | None:
    """A year given as a number or a string of digits; ``None`` when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise BadRecord(f"'{key}' must be a year such as 2019, got {value!r}")


def _id(value: Any, key: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    if value is None or value == "":
        raise BadRecord(f"missing '{key}'; every record needs a unique, non-empty {key}")
    raise BadRecord(f"'{key}' must be a string or an integer, got {type(value).__name__}")


def _acl(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(g, str) and g for g in value):
        return list(value)
    raise BadRecord(f"'acl' must be a list of group names, got {value!r}")
