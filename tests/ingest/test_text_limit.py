"""A file whose text is over ``ingest.max_text_chars`` is skipped as too_large with the setting named, so one
huge upload cannot hold the job queue for its embedding (issue 46)."""

from __future__ import annotations

from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.readers import SkipReason
from deepcite.ingest.report import FileStatus, read_file_report


def test_text_over_the_limit_is_skipped_with_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    path.write_text("Warfarin dosing in the elderly. " * 40, encoding="utf-8")  # 1,280 characters
    settings = IngestSettings(isolate=False, max_text_chars=1_000)
    file, result = read_file_report(path, "huge.txt", (), settings)
    assert file.status is FileStatus.SKIPPED and result.skip.reason is SkipReason.TOO_LARGE
    assert "ingest.max_text_chars" in (file.message or "") and file.kind == "text"
    file, _ = read_file_report(path, "huge.txt", (), settings.model_copy(update={"max_text_chars": 2_000}))
    assert file.status is FileStatus.INGESTED
