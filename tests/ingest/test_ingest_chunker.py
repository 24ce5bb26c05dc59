"""The chunker: sentence boundaries, token budget, overlap, stable ids, metadata on every chunk."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import ChunkerSettings
from deepcite.errors import ConfigError
from deepcite.ingest import chunk_document, chunk_id, count_tokens, iter_documents
from deepcite.ingest.readers import Block
from deepcite.models import Document
from deepcite.text import split_sentences


def five_word_sentences(n: int) -> list[str]:
    return [f"Sentence {i} has five words." for i in range(n)]


def doc_of(sentences: list[str], **fields: object) -> Document:
    return Document(id=str(fields.pop("id", "doc")), text=" ".join(sentences), **fields)  # type: ignore[arg-type]


def settings(max_tokens: int, overlap_tokens: int = 0) -> ChunkerSettings:
    return ChunkerSettings(max_tokens=max_tokens, overlap_tokens=overlap_tokens)


def test_a_short_document_is_one_chunk_with_every_field() -> None:
    doc = Document(
        id="d1",
        text="Warfarin needs INR checks. Doses are adjusted.",
        title="Warfarin",
        section="RESULTS",
        pmid="123",
        doi="10.1/x",
        year=2020,
        url="https://example.org",
        source="trials",
        acl=["cardio"],
        metadata={"meshes": ["Warfarin"]},
    )
    (chunk,) = chunk_document(doc, ChunkerSettings())
    assert chunk.model_dump() == {
        "chunk_id": chunk_id("d1", 0, doc.text),
        "doc_id": "d1",
        "text": doc.text,
        "title": "Warfarin",
        "section": "RESULTS",
        "pmid": "123",
        "doi": "10.1/x",
        "year": 2020,
        "url": "https://example.org",
        "source": "trials",
        "authors": [],
        "venue": None,
        "file": None,
        "page": None,
        "page_end": None,
        "acl": ["cardio"],
        "position": 0,
        "metadata": {"meshes": ["Warfarin"]},
        "sentence_spans": [(0, 26), (27, 46)],
        "sentence_pages": None,  # text without pages
        "kind": "prose",
        "sentence_kinds": None,  # all prose
    }


def test_chunks_hold_whole_sentences_within_the_budget() -> None:
    sentences = five_word_sentences(10)
    chunks = chunk_document(doc_of(sentences), settings(max_tokens=12))
    assert [c.text for c in chunks] == [" ".join(sentences[i : i + 2]) for i in range(0, 10, 2)]
    assert [c.position for c in chunks] == [0, 1, 2, 3, 4]


def test_overlap_carries_whole_trailing_sentences() -> None:
    sentences = five_word_sentences(6)
    chunks = chunk_document(doc_of(sentences), settings(max_tokens=15, overlap_tokens=5))
    texts = [split_sentences(c.text) for c in chunks]
    assert texts == [sentences[0:3], sentences[2:5], sentences[4:6]]


def test_overlap_smaller_than_a_sentence_carries_nothing() -> None:
    sentences = five_word_sentences(6)
    chunks = chunk_document(doc_of(sentences), settings(max_tokens=15, overlap_tokens=4))
    assert [split_sentences(c.text) for c in chunks] == [sentences[0:3], sentences[3:6]]


@pytest.mark.parametrize(("max_tokens", "overlap"), [(5, 0), (7, 3), (12, 6), (30, 10), (31, 29), (256, 32)])
def test_budget_order_and_coverage_hold_for_mixed_sentence_lengths(max_tokens: int, overlap: int) -> None:
    # unique words, so each chunk's place in the text can be found; lengths 2 to 14 words
    sentences = [f"S{i} " + " ".join(f"w{i}.{j}" for j in range(1 + (i * 7) % 13)) + "." for i in range(40)]
    chunks = chunk_document(doc_of(sentences), settings(max_tokens, overlap))
    assert all(count_tokens(c.text) <= max_tokens for c in chunks)
    # no chunk is empty, each moves on past the previous one, and together they cover the text in order
    words = " ".join(sentences).split()
    covered = 0
    for c in chunks:
        chunk_words = c.text.split()
        start = next(i for i in range(len(words)) if words[i : i + len(chunk_words)] == chunk_words)
        assert start <= covered < start + len(chunk_words)
        assert covered - start <= overlap  # what repeats is at most the overlap
        covered = start + len(chunk_words)
    assert covered == len(words)
    # each chunk records its sentences, which are the document's sentences, whole
    for c in chunks:
        assert c.sentence_spans is not None
        assert " ".join(c.sentences()) == c.text
        assert all(s in sentences for s in c.sentences()) or max_tokens < 15  # cut only past the budget


def test_an_overlong_sentence_is_cut_into_word_windows() -> None:
    sentence = " ".join(f"W{i}" for i in range(25)) + "."
    chunks = chunk_document(doc_of(["Short one here.", sentence, "Short two here."]), settings(max_tokens=10))
    assert [count_tokens(c.text) for c in chunks] == [3, 10, 10, 8]  # the 5-word tail packs with the next
    assert chunks[3].text == "W20 W21 W22 W23 W24. Short two here."
    assert chunks[1].text == " ".join(f"W{i}" for i in range(10))


def test_a_sentence_cut_by_a_page_break_stays_whole_in_one_chunk() -> None:
    # a PDF's blocks are pages: the sentence runs on from page 1 to page 2
    blocks = [
        Block("The cohort was small. The trial ran at three institutions without", 1, "Methods"),
        Block("a control group [4]. Results came later. Nothing else happened here.", 2, "Methods"),
    ]
    doc = Document(id="p", text="\n\n".join(b.text for b in blocks))
    chunks = chunk_document(doc, settings(max_tokens=12), blocks)
    sentences = [s for c in chunks for s in c.sentences()]
    whole = "The trial ran at three institutions without a control group [4]."
    assert sentences == ["The cohort was small.", whole, "Results came later.", "Nothing else happened here."]
    (spanning,) = [c for c in chunks if whole in c.sentences()]
    assert (spanning.page, spanning.page_end) == (1, 2)
    assert [(c.page, c.page_end) for c in chunks if c is not spanning] == [(1, None), (2, None)]


def test_a_chunks_sentences_are_read_from_its_stored_offsets() -> None:
    (chunk,) = chunk_document(doc_of(["Dose was 2.5 mg vs. placebo.", "It worked."]), ChunkerSettings())
    assert chunk.sentences() == ["Dose was 2.5 mg vs. placebo.", "It worked."]
    # the offsets are what is read: a chunk that records other boundaries gets those
    moved = chunk.model_copy(update={"sentence_spans": [(0, 12), (13, len(chunk.text))]})
    assert moved.sentences() == ["Dose was 2.5", "mg vs. placebo. It worked."]
    assert moved.model_copy(update={"sentence_spans": None}).sentences() == chunk.sentences()


def test_empty_text_gives_no_chunks() -> None:
    assert chunk_document(Document(id="x", text="  "), ChunkerSettings()) == []


def test_same_input_same_ids() -> None:
    doc = doc_of(five_word_sentences(10), id="paper-7")
    first = chunk_document(doc, settings(max_tokens=12, overlap_tokens=5))
    again = chunk_document(doc.model_copy(deep=True), settings(max_tokens=12, overlap_tokens=5))
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert len({c.chunk_id for c in first}) == len(first)
    assert first[0].chunk_id.startswith("paper-7::0::")


def test_an_edit_changes_only_the_ids_of_the_chunks_it_touches() -> None:
    sentences = five_word_sentences(6)
    before = chunk_document(doc_of(sentences), settings(max_tokens=10))
    edited = [*sentences[:-1], "The last sentence was rewritten."]
    after = chunk_document(doc_of(edited), settings(max_tokens=10))
    assert [c.chunk_id for c in before[:2]] == [c.chunk_id for c in after[:2]]
    assert before[2].chunk_id != after[2].chunk_id


def test_identical_passages_get_distinct_ids_in_other_documents_and_positions() -> None:
    repeated = ["The same sentence again.", "The same sentence again."]
    a = chunk_document(doc_of(repeated, id="a"), settings(max_tokens=4))
    b = chunk_document(doc_of(repeated, id="b"), settings(max_tokens=4))
    assert a[0].text == a[1].text == b[0].text
    assert len({c.chunk_id for c in a + b}) == 4


def test_metadata_is_copied_not_shared() -> None:
    doc = Document(id="d", text="One. Two.", metadata={"k": "v"}, acl=["g"])
    (chunk,) = chunk_document(doc, ChunkerSettings())
    chunk.metadata["k"] = "changed"
    chunk.acl.append("other")
    assert (doc.metadata, doc.acl) == ({"k": "v"}, ["g"])


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_impossible_settings_are_a_config_error(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ConfigError, match="chunker"):
        chunk_document(Document(id="d", text="Text."), settings(max_tokens, overlap))


def test_pubmedqa_sections_keep_pmid_section_and_title_on_every_chunk(fixtures: Path) -> None:
    docs = [d for d in iter_documents(fixtures / "pubmedqa") if isinstance(d, Document)]
    chunks = [c for d in docs for c in chunk_document(d, settings(max_tokens=12, overlap_tokens=4))]
    assert len(chunks) > len(docs)  # the budget split some sections
    for c in chunks:
        doc = next(d for d in docs if d.id == c.doc_id)
        assert (c.pmid, c.section, c.title, c.year) == (doc.pmid, doc.section, doc.title, doc.year)


def test_numbered_groups_in_a_parenthesis_do_not_cut_the_stored_sentence() -> None:
    # PubMedQA pmid 25985014 (the sample corpus): pysbd reads "(Group 1) … (Group 2) " as a numbered list
    whole = (
        "The patient population consisted of 519 subjects undergoing Maze IV at three institutions "
        "without (Group 1) or with (Group 2) ganglionated plexi (GP) ablation."
    )
    doc = doc_of(["We studied ablation.", whole, "Median follow-up was 36.7 months."])
    chunks = chunk_document(doc, settings(max_tokens=30, overlap_tokens=5))
    assert [s for c in chunks for s in c.sentences()] == [
        "We studied ablation.",
        whole,
        "Median follow-up was 36.7 months.",
    ]
