"""A stand-in for a perfect reader, to measure how far the research's LLM-chosen hops could carry multi-hop
recall: an OpenAI-compatible server on 127.0.0.1 that answers the next-hop request (``research.next_hop``) from
MuSiQue's gold decomposition, and refuses every other request (so those stages run offline, as without an LLM).

It reads the question and the passages the research shows it. The first hop whose supporting paragraph is not
among them is the missing fact: ``next_query`` is that hop's sub-question with the earlier hops' answers put in
("Who was the first president of #1?" -> "... of American Psychological Association?") and ``entity`` is the
answer it builds on. When every hop's paragraph is shown it says the question is answered. ``supporting`` names
the shown passages that are hops' paragraphs. It reads only what an ideal reader could: a hop's answer is used
once its paragraph has been shown.

    python benchmarks/oracle_reader.py --data ../shared/datasets/hipporag_musique/musique_train.json --port 8391 &
    DEEPCITE_LLM_BASE_URL=http://127.0.0.1:8391/v1 DEEPCITE_LLM_MODEL=oracle \
      python benchmarks/multihop_settings.py --profile default --data <same file> --data-dir <pool> \
      '{}' '{"next_hop": {"enabled": true}}'

Evaluation only: no user path runs it. The figure it gives is a ceiling for an LLM reader, not a system's.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from standin_llm import completion

from deepcite.evaluation.multihop import detect_format
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.json_records import read_records

_REF = re.compile(r"#(\d+)")
_PASSAGE = re.compile(r"^\[\d+\] (.*)$")


@dataclass(frozen=True)
class Hop:
    """One step of a question's gold decomposition and the paragraph that supports it."""

    question: str
    answer: str
    title: str
    text: str


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _musique_hops(record: dict[str, Any]) -> list[Hop]:
    """MuSiQue: a hop per step of the gold decomposition, with the paragraph that supports it."""
    paragraphs = {p["idx"]: p for p in record["paragraphs"]}
    return [
        Hop(
            step["question"],
            step["answer"],
            paragraphs[step["paragraph_support_idx"]]["title"],
            _norm(paragraphs[step["paragraph_support_idx"]]["paragraph_text"]),
        )
        for step in record["question_decomposition"]
    ]


def _page_hops(record: dict[str, Any], fmt: str) -> list[Hop]:
    """HotpotQA (HippoRAG's layout or IRCoT's): a hop per supporting page, found by its title, whose query is
    that title: the bridge a reader reads from the first page is the second page's name. Before any supporting
    page is shown, only a page the question names can be asked for."""
    if fmt == "ircot":
        titles = dict.fromkeys(c["title"] for c in record["contexts"] if c["is_supporting"])
    else:
        titles = dict.fromkeys(t for t, *_ in record["supporting_facts"])
    return [Hop(title, title, title, "") for title in titles]


def load_hops(path: str) -> dict[str, list[Hop]]:
    """Question text -> its gold hops, from a question file ``deepcite eval multihop`` reads (its layout
    detected as the evaluation detects it): MuSiQue's decomposition, or HotpotQA's supporting pages."""
    hops: dict[str, list[Hop]] = {}
    for raw in read_records(Path(path)):
        if isinstance(raw, LoadProblem):
            continue
        record, fmt = raw.value, detect_format(raw.value)
        if fmt is None:
            continue
        question = record.get("question_text") or record["question"]
        hops[_norm(question)] = _musique_hops(record) if fmt == "musique" else _page_hops(record, fmt)
    return hops


def _shown_at(hop: Hop, passages: list[str]) -> int | None:
    """The number (1 = first) of the shown passage ("title: text") that is a piece of the hop's paragraph."""
    head = _norm(hop.title) + ": "
    for number, line in enumerate(passages, start=1):
        if line.startswith(head):
            piece = line[len(head) :][:80]
            if not hop.text or (piece and piece in hop.text):  # a HotpotQA page is its title
                return number
    return None


def next_hop(hops: list[Hop], user: str) -> dict[str, object]:
    """The perfect reader's reply to one next-hop request: the shown passages of the hops read so far as
    ``supporting``, and the first hop not yet shown as the next query."""
    passages = [_norm(m.group(1)) for line in user.splitlines() if (m := _PASSAGE.match(line))]
    at = [_shown_at(hop, passages) for hop in hops]
    supporting = [n for n in at if n is not None]
    question = _norm(user.splitlines()[0].removeprefix("Question:"))
    for hop, number in zip(hops, at, strict=True):
        if number is not None:
            continue
        if not hop.text and not supporting and _norm(hop.title) not in question:
            continue  # a HotpotQA page no shown page has named yet: no reader knows its name
        refs = [int(n) - 1 for n in _REF.findall(hop.question)]
        query = _REF.sub(lambda m: hops[int(m.group(1)) - 1].answer, hop.question)
        query = query.replace(" >> ", " ").strip(" ?") + "?"  # MuSiQue's "Brother >> performer"
        entity = hops[refs[0]].answer if refs else ("" if hop.text else hop.title)
        return {"answered": False, "next_query": query, "entity": entity, "supporting": supporting}
    if any(n is None for n in at):  # nothing it can name yet: the question again, which adds no query
        asked = user.splitlines()[0].removeprefix("Question:").strip()
        return {"answered": False, "next_query": asked, "entity": "", "supporting": supporting}
    return {"answered": True, "next_query": "", "entity": "", "supporting": supporting}


def build_app(hops: dict[str, list[Hop]]) -> FastAPI:
    app = FastAPI()
    counts = {"next_hop": 0, "refused": 0, "unknown_question": 0}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, object]:
        body = await request.json()
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        reply: dict[str, object] = {}
        if system.startswith("You guide a multi-hop search"):
            question = _norm(user.splitlines()[0].removeprefix("Question:"))
            if question in hops:
                counts["next_hop"] += 1
                reply = next_hop(hops[question], user)
            else:
                counts["unknown_question"] += 1
        else:
            counts["refused"] += 1
        return completion(json.dumps(reply), body.get("model", "oracle"), "oracle")

    @app.get("/counts")
    async def seen() -> dict[str, int]:
        return counts

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a MuSiQue question file with question_decomposition")
    parser.add_argument("--port", type=int, default=8391)
    args = parser.parse_args()
    uvicorn.run(build_app(load_hops(args.data)), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
