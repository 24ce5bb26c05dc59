"""A record a loader could not read: reported, not raised, so the caller decides (skip or fail)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from deepcite.errors import IngestError


@dataclass(frozen=True)
class LoadProblem:
    """One unreadable record: the file, the 1-based line (``None`` when the file has no lines to point at)
    and what was wrong with it. Loaders yield these in place of a ``Document`` and carry on reading."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        return str(self.to_error())

    def to_error(self) -> IngestError:
        """The :class:`IngestError` to raise when the caller's policy is to fail."""
        return IngestError(self.reason, path=self.path, line=self.line)

    def to_dict(self) -> dict[str, str | int | None]:
        return asdict(self)
