"""The PubMedQA PQA-L set: its questions by split and its abstracts (without conclusions) as a collection."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from deepcite.engine import Engine
from deepcite.errors import InputError

SPLITS = ("train", "test")
PUBMEDQA_COLLECTION = "eval-pubmedqa-pqal"


@dataclass(frozen=True)
class PubMedQAItem:
    """One PQA-L question with its abstract sections and the authors' conclusion."""

    pmid: str
    question: str
    contexts: list[str]
    long_answer: str


def load_pubmedqa(folder: Path, split: str, limit: int | None = None) -> list[PubMedQAItem]:
    """The ``split`` questions of a PQA-L folder (``ori_pqal.json``, ``test_ground_truth.json``)."""
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    data_file, test_file = folder / "ori_pqal.json", folder / "test_ground_truth.json"
    if not data_file.is_file() or not test_file.is_file():
        raise InputError(
            f"{folder} has no ori_pqal.json and test_ground_truth.json; give the PubMedQA PQA-L folder"
        )
    data = json.loads(data_file.read_text(encoding="utf-8"))
    test = set(json.loads(test_file.read_text(encoding="utf-8")))
    items = [
        PubMedQAItem(pmid, entry["QUESTION"], list(entry["CONTEXTS"]), entry["LONG_ANSWER"])
        for pmid, entry in sorted(data.items())
        if (pmid in test) == (split == "test")
    ]
    return items[:limit] if limit is not None else items


def pubmedqa_collection(folder: Path, engine: Engine) -> str:
    """The PQA-L abstracts (without conclusions) ingested into collection :data:`PUBMEDQA_COLLECTION` (a cached
    collection's unchanged chunks are reused); returns its name."""
    engine.ingest(PUBMEDQA_COLLECTION, folder / "ori_pqal.json", fmt="pubmedqa")
    return PUBMEDQA_COLLECTION
