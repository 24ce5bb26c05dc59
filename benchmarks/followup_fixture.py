"""Build the follow-up-query fixture (tests/fixtures/research/followup/): 20 questions over PubMedQA and the real
documents, and the passages the research engine reads for them, excerpted from a pool of related abstracts and
the documents' chunks.

    .venv/bin/python benchmarks/followup_fixture.py --shared ../shared/datasets --data-dir /tmp/followup-pool

The pool: every abstract of PubMedQA PQA-L that shares the most words with one of the chosen questions
(``--related`` per question), and the chunks of the chosen real documents. Each question is researched over
the pool (the engine's default settings, no LLM); the passages selected in any of its rounds, and the best of
its final pack, are written as JSON Lines with their origin, and the questions as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.config import Settings  # noqa: E402
from deepcite.ingest.pipeline import IngestPipeline  # noqa: E402
from deepcite.models import Document  # noqa: E402
from deepcite.research.agent import ResearchAgent  # noqa: E402
from deepcite.retrieval.collection import open_collection  # noqa: E402
from deepcite.text import tokenize  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "research" / "followup"
# PubMedQA PQA-L questions, by PMID: the first question (by PMID) that names each of 14 clinical topics
PUBMEDQA = [
    "11340218",  # pretreatment with statins and outcome after stroke
    "10173769",  # the Barthel index as a measure of outcome after stroke
    "10354335",  # medical students and quality assurance in day surgery
    "12006913",  # lipids, blood pressure, diabetes and smoking: risk of myocardial infarction in women and men
    "10927144",  # p53 alterations and the response of rectal cancer to chemo-radiotherapy
    "10223070",  # perforation of the appendix, tubal infertility and ectopic pregnancy
    "15112004",  # replacement milks for infants of HIV-infected mothers in South Africa
    "17595200",  # intrauterine influence on obesity
    "12920330",  # somatic complaints and later symptoms of depression
    "10201555",  # low serum chloride and cardiovascular mortality
    "10798511",  # abdominal computed tomography after blunt trauma in intoxicated patients
    "10340286",  # leukocyte and CRP measurements in acute appendicitis in the elderly
    "12970636",  # early discharge with nurse home visits and newborn metabolic screening
    "17606778",  # vitamin C and complex regional pain syndrome after wrist fractures
]
# real documents and a question a reader of each would ask
REAL_DOCS = {
    "gravity_hill.md": "What causes the optical illusion of a gravity hill?",
    "wiki.md": "When did IBM take its current name and who led the company then?",
    "flag_day.html": "Why is National Flag of Canada Day celebrated on February 15?",
    "norwich-city.txt": "Which clubs did Iwan Roberts play for before Norwich City?",
    "multi-column.pdf": "How does dense passage retrieval compare with BM25 for open-domain question answering?",
    "pasa.pdf": "How does PaSa use reinforcement learning to search for academic papers?",
}


def related(pqal: dict, question: str, n: int) -> list[str]:
    """The PMIDs of the ``n`` abstracts whose question and text share the most stemmed words with ``question``."""
    asked = set(tokenize(question))
    scored = []
    for pmid, entry in pqal.items():
        words = set(tokenize(entry["QUESTION"] + " " + " ".join(entry["CONTEXTS"])))
        scored.append((len(asked & words), pmid))
    return [pmid for _, pmid in sorted(scored, reverse=True)[:n]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", required=True, type=Path, help="the shared datasets folder")
    parser.add_argument("--data-dir", required=True, type=Path, help="where the pool collection is built")
    parser.add_argument("--related", type=int, default=12, help="related abstracts pooled per question")
    parser.add_argument("--final", type=int, default=4, help="passages of each final pack kept")
    parser.add_argument("--per-round", type=int, default=3, help="selected passages of each round kept")
    args = parser.parse_args()
    pqal = json.loads((args.shared / "pubmedqa_pqal" / "ori_pqal.json").read_text())
    questions = [{"question": pqal[p]["QUESTION"], "source": f"PubMedQA PQA-L, PMID {p}"} for p in PUBMEDQA]
    questions += [{"question": q, "source": f"real_docs/{name}"} for name, q in REAL_DOCS.items()]
    pool = sorted({p for q in PUBMEDQA for p in [q, *related(pqal, pqal[q]["QUESTION"], args.related)]})
    settings = Settings(data_dir=args.data_dir)
    collection = open_collection("followup-pool", settings)
    docs = [
        Document(
            id=f"{pmid}-{i}",
            text=text,
            title=pqal[pmid]["QUESTION"],
            pmid=pmid,
            source=f"PubMedQA PMID {pmid}",
        )
        for pmid in pool
        for i, text in enumerate(pqal[pmid]["CONTEXTS"])
    ]
    pipeline = IngestPipeline(collection)
    pipeline.ingest(docs)
    files = [args.shared / "real_docs" / "files" / name for name in REAL_DOCS]
    pipeline.ingest_files(files, on_error="skip")
    agent = ResearchAgent(collection, settings.research)
    keep: dict[str, dict] = {}
    for q in questions:
        result = agent.process(q["question"])
        chosen = [c.chunk for c in result.pack.final_evidence[: args.final]]
        for report in result.pack.retrieval_report:
            for passage in report.selected[: args.per_round]:
                chosen.extend(
                    c.chunk for c in result.pack.final_evidence if c.chunk.chunk_id == passage.chunk_id
                )
        for chunk in chosen:
            origin = f"PubMedQA PMID {chunk.pmid}" if chunk.pmid else f"real_docs/{chunk.doc_id}"
            keep.setdefault(
                chunk.chunk_id,
                {"id": chunk.chunk_id, "title": chunk.title, "text": chunk.text, "origin": origin},
            )
        print(q["question"], "->", len(keep), "passages so far", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "passages.jsonl").open("w", encoding="utf-8") as fh:
        for record in keep.values():
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    (OUT / "questions.json").write_text(json.dumps(questions, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
