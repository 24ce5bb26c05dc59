"""``GET /api/document-view`` (the viewer's text) against the real server, and the overlap rule of
:func:`~deepcite.server.routes_view.reading_blocks` on crafted passages."""

from __future__ import annotations

import httpx

from deepcite.models import Chunk
from deepcite.server.routes_view import reading_blocks
from server.conftest import CARDIO, COLLECTION, ONCOLOGY_MARKER, LiveServer, headers


def _chunk(position: int, text: str) -> Chunk:
    return Chunk(chunk_id=f"c{position}", doc_id="d", text=text, position=position, page=position + 1)


PASSAGES = [
    _chunk(0, "Alpha one. Beta two. Gamma three."),
    _chunk(1, "Gamma three. Delta four. Epsilon five."),
    _chunk(2, "Epsilon five. Zeta six."),
]


def test_each_overlap_is_shown_once_and_taken_from_the_neighbour() -> None:
    blocks = reading_blocks(PASSAGES, cited=None)
    assert (
        "".join(block.text for block in blocks)
        == "Alpha one. Beta two. Gamma three. Delta four. Epsilon five. Zeta six."
    )
    assert [block.offset for block in blocks] == [0, len("Gamma three."), len("Epsilon five.")]


def test_the_cited_passage_keeps_all_of_its_text_so_quote_offsets_hold() -> None:
    blocks = {block.chunk_id: block for block in reading_blocks(PASSAGES, cited="c1")}
    assert blocks["c1"].offset == 0 and blocks["c1"].text == PASSAGES[1].text
    assert blocks["c0"].text == "Alpha one. Beta two. "  # its end is shown in the cited passage instead
    assert blocks["c2"].text == " Zeta six."
    quote_start = PASSAGES[1].text.index("Delta four.")
    assert blocks["c1"].text[quote_start : quote_start + len("Delta four.")] == "Delta four."


def test_passages_without_overlap_are_left_whole() -> None:
    chunks = [_chunk(0, "One sentence here."), _chunk(1, "Another one there.")]
    assert [block.text for block in reading_blocks(chunks, cited="c0")] == [c.text for c in chunks]


def test_the_route_gives_a_documents_passages_in_order(live: LiveServer) -> None:
    response = httpx.get(
        live.base_url + "/api/document-view",
        params={"collection": COLLECTION, "document": "onco-secret-1"},
        headers=headers("admin-token"),
    )
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["doc_id"] == "onco-secret-1" and view["media_type"] is None  # records: no original file
    assert ONCOLOGY_MARKER in " ".join(block["text"] for block in view["passages"]).lower()


def test_another_groups_document_is_a_404_that_shows_nothing(live: LiveServer) -> None:
    response = httpx.get(
        live.base_url + "/api/document-view",
        params={"collection": COLLECTION, "document": "onco-secret-1"},
        headers=headers(CARDIO),
    )
    assert response.status_code == 404
    assert ONCOLOGY_MARKER not in response.text.lower()
    missing = httpx.get(
        live.base_url + "/api/document-view",
        params={"collection": COLLECTION, "document": "no-such-document"},
        headers=headers("admin-token"),
    )
    assert missing.status_code == 404 and missing.json()["message"] == response.json()["message"]


def test_a_malformed_document_id_is_a_400_that_says_what_to_do(live: LiveServer) -> None:
    response = httpx.get(
        live.base_url + "/api/document-view",
        params={"collection": COLLECTION, "document": "../etc/passwd"},
        headers=headers("admin-token"),
    )
    assert response.status_code == 400
    assert "take it from a search hit" in response.json()["message"]
