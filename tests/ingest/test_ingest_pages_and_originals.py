"""Pages and sections from reader blocks onto chunks; the store of original files."""

from __future__ import annotations

from pathlib import Path

from deepcite.config import ChunkerSettings, Settings
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.readers import Block
from deepcite.models import Document
from deepcite.retrieval.originals import OriginalsStore


def test_a_chunk_crossing_a_page_break_records_page_and_page_end() -> None:
    blocks = [
        Block("One two three four. Five six seven eight.", 1, "1 Introduction"),
        Block("Nine ten eleven twelve. Thirteen fourteen fifteen.", 2, "1 Introduction"),
        Block("Cited work one. Cited work two.", 2, "References"),
    ]
    doc = Document(id="d", text="\n\n".join(b.text for b in blocks))
    chunks = chunk_document(doc, ChunkerSettings(max_tokens=12, overlap_tokens=0), blocks)
    assert [(c.section, c.page, c.page_end) for c in chunks] == [
        ("1 Introduction", 1, 2),  # sentences of pages 1 and 2 in one chunk
        ("1 Introduction", 2, None),
        ("References", 2, None),  # a chunk never spans two sections
    ]
    assert chunks[0].sentence_pages == [1, 1, 2]  # the page each sentence starts on
    again = chunk_document(doc, ChunkerSettings(max_tokens=12, overlap_tokens=0), blocks)
    assert [c.chunk_id for c in again] == [c.chunk_id for c in chunks]  # same input, same ids


def test_originals_are_stored_once_per_content_and_removed_when_unused(tmp_path: Path) -> None:
    store = OriginalsStore.for_collection(Settings(data_dir=tmp_path), "papers")
    first = tmp_path / "a.pdf"
    first.write_bytes(b"%PDF-1.4 first")
    row = store.put("a.pdf", first, media_type="application/pdf")
    store.put("copy.pdf", first, media_type="application/pdf", name="copy of a.pdf")
    path = store.path_for("a.pdf")
    assert path == store.path_for("copy.pdf") == tmp_path / "files" / "papers" / f"{row.sha256}.pdf"
    assert path.read_bytes() == b"%PDF-1.4 first" and store.media_type("a.pdf") == "application/pdf"
    assert store.remove("a.pdf") and path.exists()  # still the original of copy.pdf
    assert store.remove("copy.pdf") and not path.exists()
    assert store.path_for("a.pdf") is None and not store.remove("a.pdf")
    assert [p.name for p in store.root.iterdir()] == ["manifest.sqlite"]  # no temporary file left


def test_a_collection_name_cannot_escape_the_data_dir(tmp_path: Path) -> None:
    import pytest

    from deepcite.errors import InputError

    with pytest.raises(InputError, match="cannot name a folder"):
        OriginalsStore.for_collection(Settings(data_dir=tmp_path), "../etc")
