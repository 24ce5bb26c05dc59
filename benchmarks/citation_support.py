"""How well the citation support check removes unsupported citations and keeps supported ones.

    nice -n 10 .venv/bin/python benchmarks/citation_support.py --limit 300

A crafted set from real PubMed abstracts (PubMedQA PQA-L, ``/work/shared/datasets/pubmedqa_pqal``); the
cited passage is an abstract's text (its ``CONTEXTS``, without the conclusion):

- supported: a sentence taken from the cited abstract (what the extractive writer quotes), and the
  abstract's own conclusion (``LONG_ANSWER``'s first sentence: the authors' summary of the findings, as an
  LLM would paraphrase them; it is not part of the passage);
- unsupported: the same two sentences citing the most similar *other* abstract of the set (the nearest by
  the embedder: same topic, wrong passage).

Abstracts are split in two halves by position (even: tune, odd: report). The tune half picks
``answer.citations.lexical_weight`` and ``answer.citations.support_threshold`` (the largest gap between the
shares of unsupported and supported citations removed, among settings removing at most
``--max-supported-removed`` of the supported ones); the report half is then checked with them through the
real :func:`check_citations`. The configured defaults are checked on the report half too.
Writes ``benchmarks/results/citation_support/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from results_path import result_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.answer.citations import check_citations  # noqa: E402
from deepcite.answer.support import CitationSupport, lexical_support  # noqa: E402
from deepcite.config import Settings  # noqa: E402
from deepcite.retrieval.embedders import build_embedder  # noqa: E402
from deepcite.text import split_sentences, tokenize  # noqa: E402

PQAL = Path("/work/shared/datasets/pubmedqa_pqal/ori_pqal.json")
WEIGHTS = [round(0.1 * i, 1) for i in range(11)]
THRESHOLDS = [round(0.30 + 0.01 * i, 2) for i in range(51)]


@dataclass
class Case:
    item: int  # abstract index (its parity picks the half)
    kind: str  # "quoted" or "conclusion"
    supported: bool
    sentence: str
    passage: int  # the cited abstract
    lexical: float = 0.0
    similarity: float = 0.0


def build_cases(passages: list[str], conclusions: list[str], vectors: np.ndarray, seed: int) -> list[Case]:
    rng = random.Random(seed)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    cases: list[Case] = []
    for i, passage in enumerate(passages):
        quotable = [s for s in split_sentences(passage) if len(tokenize(s)) >= 5]
        wrong = int(np.argmax(sims[i]))
        for kind, sentence in (("quoted", rng.choice(quotable)), ("conclusion", conclusions[i])):
            cases.append(Case(i, kind, True, sentence, i))
            cases.append(Case(i, kind, False, sentence, wrong))
    return cases


def removal(cases: list[Case], weight: float, threshold: float, verbatim: float) -> tuple[float, float]:
    """(share of unsupported removed, share of supported removed) under one setting, from cached scores."""

    def kept(c: Case) -> bool:
        return c.lexical >= verbatim or weight * c.lexical + (1 - weight) * c.similarity >= threshold

    unsupported = [c for c in cases if not c.supported]
    supported = [c for c in cases if c.supported]
    return (
        sum(not kept(c) for c in unsupported) / len(unsupported),
        sum(not kept(c) for c in supported) / len(supported),
    )


def checked(cases: list[Case], passages: list[str], support: CitationSupport) -> dict[str, float]:
    """Figures of the real citation check: each case is the text ``sentence [id]``."""
    texts = {i + 1: p for i, p in enumerate(passages)}
    removed = {True: 0, False: 0}
    by_kind: dict[str, list[int]] = {}
    for c in cases:
        _, check = check_citations(
            f"{c.sentence.rstrip('.')} [{c.passage + 1}].",
            texts,
            supports=lambda s, i: support.supports(s, texts[i]),
        )
        gone = check.removed > 0
        removed[c.supported] += gone
        tally = by_kind.setdefault(f"{c.kind}_{'supported' if c.supported else 'unsupported'}", [0, 0])
        tally[0] += gone
        tally[1] += 1
    n_sup = sum(c.supported for c in cases)
    n_uns = len(cases) - n_sup
    return {
        "unsupported_removed": round(removed[False] / n_uns, 4),
        "supported_removed": round(removed[True] / n_sup, 4),
        "cases": len(cases),
        **{f"removed_{k}": round(v[0] / v[1], 4) for k, v in sorted(by_kind.items())},
    }


def primed(support: CitationSupport, cases: list[Case], passages: list[str]) -> CitationSupport:
    """``support`` with the cases' sentences and cited passages embedded in one batch each."""
    support.prime([c.sentence for c in cases], [passages[c.passage] for c in cases])
    return support


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=300, help="abstracts (in PMID order)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-supported-removed", type=float, default=0.05)
    args = parser.parse_args()

    started = time.perf_counter()
    data = sorted(json.loads(PQAL.read_text()).items())[: args.limit]
    passages = [" ".join(v["CONTEXTS"]) for _, v in data]
    conclusions = [split_sentences(v["LONG_ANSWER"])[0] for _, v in data]
    settings = Settings()
    embedder = build_embedder(settings)
    cases = build_cases(passages, conclusions, embedder.encode(passages), args.seed)
    defaults = settings.answer
    scorer = primed(CitationSupport(embedder, defaults), cases, passages)
    for c in cases:
        c.lexical = lexical_support(c.sentence, passages[c.passage])
        c.similarity = scorer.similarity(c.sentence, passages[c.passage])
    tune = [c for c in cases if c.item % 2 == 0]
    report = [c for c in cases if c.item % 2 == 1]

    grid = []
    for weight in WEIGHTS:
        for threshold in THRESHOLDS:
            unsup, sup = removal(tune, weight, threshold, defaults.citations.verbatim_lexical)
            grid.append((sup <= args.max_supported_removed, unsup - sup, unsup, sup, weight, threshold))
    grid.sort(reverse=True)
    _, _, tune_unsup, tune_sup, weight, threshold = grid[0]
    tuned = defaults.tuned(citations={"lexical_weight": weight, "support_threshold": threshold})
    result = {
        "command": f"benchmarks/citation_support.py --limit {args.limit} --seed {args.seed}",
        "abstracts": len(passages),
        "tune_half": {"cases": len(tune), "unsupported_removed": tune_unsup, "supported_removed": tune_sup},
        "tuned": {"citation_lexical_weight": weight, "citation_support_threshold": threshold},
        "report_half_tuned": checked(
            report, passages, primed(CitationSupport(embedder, tuned), report, passages)
        ),
        "defaults": {
            "citation_lexical_weight": defaults.citations.lexical_weight,
            "citation_support_threshold": defaults.citations.support_threshold,
            "citation_verbatim_lexical": defaults.citations.verbatim_lexical,
        },
        "report_half_defaults": checked(report, passages, scorer),
        "seconds": round(time.perf_counter() - started, 1),
    }
    result_path("citation_support").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
