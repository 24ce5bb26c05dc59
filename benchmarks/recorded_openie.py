"""Recorded GPT-3.5 output, served as an LLM: a stand-in OpenAI-compatible server on 127.0.0.1 that answers
deepcite's triple-extraction requests (``graph.llm_triples``, :mod:`deepcite.retrieval.graph.triples`) with the
entities and triples GPT-3.5 wrote for the same passages in HippoRAG's OpenIE run, so the LLM graph path can be
measured on a real model's output where no remote LLM is reachable.

A request's passages ("Passage n:" blocks of the user message, each "title. text" as deepcite writes it) are
matched to the recording by that text, whitespace aside (deepcite's chunker joins sentences with one space:
"(2.06 m).[d]" is read as "(2.06 m). [d]"); the reply is deepcite's own format,
``{"passages": [{"passage": n, "entities": [...], "triples": [[s, r, o], ...]}]}``. A passage deepcite cut in
pieces (8 of MuSiQue train's 1,890 are longer than a chunk) is matched to the recorded passage of its title that
holds it, and answered with the recorded entities and triples whose names it holds word for word. A passage the
recording lacks is answered with no entities and no triples (nothing is invented). A recorded triple that is not three
strings (GPT-3.5 wrote 185 of 17,419 for MuSiQue train with two, four, five or six items) is left out, as
deepcite's JSON schema would refuse it; the count is kept. Every other request (planning, coverage, next hops)
is refused with an empty object, so those stages fall back to their offline rules as without an LLM.

    python benchmarks/recorded_openie.py \
        --openie ../shared/datasets/hipporag_musique/openie_gpt35_musique_train.json --port 8392 &
    DEEPCITE_LLM_BASE_URL=http://127.0.0.1:8392/v1 DEEPCITE_LLM_MODEL=recorded-gpt-3.5-turbo-1106 \
        deepcite eval multihop --data ../shared/datasets/hipporag_musique/musique_train.json \
        --data-dir .data/bench --systems default,llm_triples
    curl http://127.0.0.1:8392/counts   # passages answered from the recording, lacking, requests refused

The recording's file is HippoRAG's ``output/openie_*_results_ner_*.json`` layout: ``{"docs": [{"title", "text",
"extracted_entities", "extracted_triples"}, ...]}``. Evaluation and tests only: no user path runs it.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from standin_llm import completion

from deepcite.retrieval.graph.triples import SYSTEM_PROMPT

MODEL = "recorded-gpt-3.5-turbo-1106"
PASSAGE = re.compile(r"Passage (\d+):\n(.*?)(?=\n\nPassage \d+:\n|\Z)", re.S)


def _fold(text: str) -> str:
    """The text as the recording is matched: lower case, no whitespace."""
    return "".join(text.split()).lower()


@dataclass(frozen=True)
class RecordedFacts:
    """What the recorded model wrote for one passage: its entities and its well-formed triples."""

    entities: tuple[str, ...]
    triples: tuple[tuple[str, str, str], ...]
    dropped: int  # recorded triples that were not three strings


@dataclass
class Recording:
    """The recorded OpenIE of a corpus, by passage text as deepcite's prompt writes it ("title. text", or the
    text alone for an untitled passage), and by title (folded) the folded texts of that title's passages."""

    by_text: dict[str, RecordedFacts]
    by_title: dict[str, list[tuple[str, RecordedFacts]]]
    counts: dict[str, int] = field(
        default_factory=lambda: {
            "requests": 0,
            "passages_answered": 0,
            "pieces_answered": 0,
            "passages_lacking": 0,
            "triples_sent": 0,
            "triples_dropped": 0,
            "refused": 0,
        }
    )

    @classmethod
    def load(cls, path: Path) -> Recording:
        """A HippoRAG OpenIE results file (``{"docs": [...]}``)."""
        by_text: dict[str, RecordedFacts] = {}
        by_title: dict[str, list[tuple[str, RecordedFacts]]] = {}
        for doc in json.loads(path.read_text(encoding="utf-8"))["docs"]:
            triples = [
                t for t in doc["extracted_triples"] if len(t) == 3 and all(isinstance(x, str) for x in t)
            ]
            facts = RecordedFacts(
                tuple(str(e) for e in doc["extracted_entities"]),
                tuple((s, r, o) for s, r, o in triples),
                len(doc["extracted_triples"]) - len(triples),
            )
            title, text = doc["title"].strip(), doc["text"].strip()
            by_text[_fold(f"{title}. {text}" if title else text)] = facts
            by_title.setdefault(_fold(title), []).append((_fold(text), facts))
        return cls(by_text, by_title)

    def _piece(self, text: str) -> RecordedFacts | None:
        """The recorded facts a piece of a recorded passage holds ("title. piece of its text"): the entities
        and the triples whose subject and object it holds word for word; None when no passage holds it."""
        at = text.find(". ")
        while at >= 0:
            piece = _fold(text[at + 2 :])
            for whole, facts in self.by_title.get(_fold(text[:at]), []):
                if piece and piece in whole:
                    return RecordedFacts(
                        tuple(e for e in facts.entities if _fold(e) in piece),
                        tuple(t for t in facts.triples if _fold(t[0]) in piece and _fold(t[2]) in piece),
                        0,
                    )
            at = text.find(". ", at + 2)
        return None

    def reply(self, user: str) -> dict[str, Any]:
        """The reply to one triple-extraction request: each passage's recorded facts, or none."""
        items = []
        for number, text in PASSAGE.findall(user):
            facts = self.by_text.get(_fold(text))
            if facts is None and (facts := self._piece(text)) is not None:
                self.counts["pieces_answered"] += 1
            elif facts is not None:
                self.counts["passages_answered"] += 1
            if facts is None:
                self.counts["passages_lacking"] += 1
                items.append({"passage": int(number), "entities": [], "triples": []})
                continue
            self.counts["triples_sent"] += len(facts.triples)
            self.counts["triples_dropped"] += facts.dropped
            items.append(
                {
                    "passage": int(number),
                    "entities": list(facts.entities),
                    "triples": [list(t) for t in facts.triples],
                }
            )
        return {"passages": items}


def build_app(recording: Recording) -> FastAPI:
    """The OpenAI-compatible chat endpoint answering triple extraction from ``recording``; ``GET /counts``."""
    app = FastAPI(title="recorded GPT-3.5 output (stand-in LLM)")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, object]:
        body = await request.json()
        messages = body.get("messages") or []
        system = messages[0].get("content", "") if messages else ""
        reply: dict[str, Any] = {}
        recording.counts["requests"] += 1
        if system == SYSTEM_PROMPT:
            reply = recording.reply(messages[-1].get("content", ""))
        else:
            recording.counts["refused"] += 1
        return completion(json.dumps(reply), body.get("model", MODEL), "recorded")

    @app.get("/counts")
    async def counts() -> dict[str, int]:
        return recording.counts

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--openie", required=True, help="a HippoRAG OpenIE results file")
    parser.add_argument("--port", type=int, default=8392)
    args = parser.parse_args()
    recording = Recording.load(Path(args.openie))
    uvicorn.run(build_app(recording), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
