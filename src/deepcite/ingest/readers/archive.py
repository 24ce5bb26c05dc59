"""Zip-bomb checks for the zip-based formats (DOCX, PPTX, EPUB), from the zip directory alone."""

from __future__ import annotations

import zipfile
from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.readers.base import ReadResult, SkipReason

_BYTES_PER_MB = 1024 * 1024


def zip_bomb(path: Path, settings: IngestSettings) -> ReadResult | None:
    """A skip when the archive's members would unpack to more than ``ingest.max_unzipped_mb`` or one is
    compressed more than ``ingest.max_zip_ratio`` times; ``None`` when the archive looks sane. Reads the
    zip directory only, never a member."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        return ReadResult.skipped(SkipReason.CORRUPT, f"a damaged zip archive ({exc})")
    total = sum(m.file_size for m in members)
    if total > settings.max_unzipped_mb * _BYTES_PER_MB:
        return ReadResult.skipped(
            SkipReason.TOO_LARGE,
            f"it unpacks to {total / _BYTES_PER_MB:.0f} MB, over the {settings.max_unzipped_mb:g} MB limit "
            "(setting ingest.max_unzipped_mb); it may be a zip bomb",
        )
    for member in members:
        if member.compress_size and member.file_size / member.compress_size > settings.max_zip_ratio:
            return ReadResult.skipped(
                SkipReason.TOO_LARGE,
                f"member {member.filename!r} is compressed {member.file_size / member.compress_size:.0f} "
                f"times, over the {settings.max_zip_ratio:g} limit (setting ingest.max_zip_ratio); it may be "
                "a zip bomb",
            )
    return None
