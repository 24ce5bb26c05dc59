"""Each hop's own question as a signal for the pack's order, on the packs ``order_replay.py record`` kept: the
question decomposed into hops (research/chain.py ``decompose``), each later hop's slot filled with the beam's answer
of the hop before (the recorded ``hop_answers``), and each passage scored by the hop question it fits best, not by
the whole question (whose words a passage on any hop may repeat).

    # the passages' cosine to each hop question (the engine's embedder), and the question's likelihood per hop
    # under the small local LM (UPR, as ``order_replay.py qlik``; the recorded order's first ``--top`` passages)
    .venv/bin/python benchmarks/hop_questions.py dense /tmp/musique-train.packs /tmp/hotpotqa-train.packs \
        --data-dir .data/musique-train --out /tmp/train.hops
    .venv/bin/python benchmarks/hop_questions.py qlik /tmp/musique-train.packs /tmp/hotpotqa-train.packs \
        --top 10 --out /tmp/train.hops
    # then weighed in and judged as order_replay.py's query likelihood is (its forms named below)
    .venv/bin/python benchmarks/order_replay.py cv … --qlik /tmp/train.hops --qlik-grid --qlik-forms hopdense

Forms written (one JSON line per passage and form, in ``order_replay.py``'s cache format): ``hopdense``, the best
cosine over the hop questions (the whole question's where it does not decompose); ``hopdense-later``, over the hops
after the first whose slot the beam filled (none: the whole question's); ``hopdense-z``, each hop's cosines
z-scored over the question's passages, then the best; ``hopdense-mean``, the mean over the hop questions;
``hopdense-whole``, the best of ``hopdense`` and the whole question's cosine; ``hoptitle`` and ``hoptitle-later``, the same as
``hopdense`` and ``hopdense-later`` with the LM's likelihood of the hop question after the titled passage
(z-scored per hop over the scored passages), ``hoptitle-whole`` the best of ``hoptitle`` and the whole question's
(``wholetitle``, the same questions' whole-question form to compare), the passages not scored left out, and a question that does not
decompose (or has no filled later hop) not scored: the signal then leaves its order as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
from order_replay import (  # noqa: E402
    Recorded,
    RecordedSet,
    load_qlik,
    load_recorded,
    ordered,
    qlik_key,
)

from deepcite.app.resources import Resources  # noqa: E402
from deepcite.config import EvidenceRankingSettings, Settings  # noqa: E402
from deepcite.research.chain import SLOT, decompose, fill  # noqa: E402
from deepcite.research.likelihood import LocalQuestionLikelihood  # noqa: E402

MAX_HOPS = 4  # research.stopping's chains are at most four hops in the train and dev sets


def hop_questions(q: Recorded) -> tuple[list[str], list[bool]]:
    """``q``'s hop questions, innermost first (each slot filled with the beam's answer at that depth, a slot
    without one dropped), and per hop whether it is a later hop whose slot was filled; the whole question alone
    when it does not decompose."""
    steps = decompose(q.question, max_hops=MAX_HOPS)
    if not steps:
        return [q.question], [False]
    answers = {depth: name for name, depth in (q.hop_answers or {}).items()}
    later = [
        bool(SLOT.findall(step)) and all(int(n) in answers for n in SLOT.findall(step)) for step in steps
    ]
    return [fill(step, answers) for step in steps], later


def _best(per_hop: np.ndarray, keep: Sequence[bool] | None) -> np.ndarray | None:
    """The best score over the hops (rows) of each passage (columns), only the hops ``keep`` marks when given."""
    rows = per_hop if keep is None else per_hop[np.array(keep, dtype=bool)]
    return rows.max(0) if len(rows) else None


def _z(rows: np.ndarray) -> np.ndarray:
    return (rows - rows.mean(1, keepdims=True)) / (rows.std(1, keepdims=True) + 1e-9)


def dense(sets: Sequence[RecordedSet], data_dir: str, out: str) -> None:
    """The dense forms of every passage of every recorded pack, appended to ``out``."""
    embedder = Resources(Settings(data_dir=data_dir)).embedder
    with open(out, "a", encoding="utf-8") as fh:
        for s in sets:
            for q in s.questions:
                hops, later = hop_questions(q)
                vectors = np.asarray(embedder.encode(hops, kind="passage"), dtype=np.float32)
                per_hop = vectors @ q.vectors.T  # hops x passages
                whole = q.vectors @ q.question_vector
                forms = {
                    "hopdense": per_hop.max(0),
                    "hopdense-later": _best(per_hop, later),
                    "hopdense-z": _z(per_hop).max(0),
                    "hopdense-mean": per_hop.mean(0),
                    "hopdense-whole": np.maximum(per_hop.max(0), whole),
                }
                for form, values in forms.items():
                    values = whole if values is None else values
                    for c, v in zip(q.evidence, values, strict=True):
                        fh.write(
                            json.dumps({"key": qlik_key(s.data, q.qid, c, form), "score": float(v)}) + "\n"
                        )
            print(f"dense {s.data}: {len(s.questions)} questions", flush=True)


def lm(sets: Sequence[RecordedSet], top: int, out: str, threads: int, chars: int) -> None:
    """The LM forms of each question's first ``top`` passages in the recorded order (each passage's first ``chars``
    characters), appended to ``out`` (each hop's raw likelihoods cached there too, as form ``hop:<hop question>``).
    The engine's own scorer (research/likelihood.py), so the figures are the engine's."""
    done = load_qlik(out)
    model = LocalQuestionLikelihood(
        EvidenceRankingSettings(
            hop_likelihood_weight=1.0,
            hop_likelihood_threads=threads,
            hop_likelihood_passage_chars=chars,
            hop_likelihood_max_hops=MAX_HOPS,
        )
    )
    began, count = time.time(), 0
    with open(out, "a", encoding="utf-8") as fh:
        for s in sets:
            ranking = EvidenceRankingSettings(**s.ranking)
            for q in s.questions:
                ranked = ordered(s, q, ranking)[:top]
                hops, later = hop_questions(q)
                if len(hops) < 2:
                    continue  # no hops: the whole question's likelihood, order_replay.py's title form
                asked = [*hops, q.question]  # the whole question last, to compare
                per_hop = np.zeros((len(asked), len(ranked)))
                # passage by passage: the model reads each passage once for all its hop questions
                for j, c in enumerate(ranked):
                    keys = [qlik_key(s.data, q.qid, c, "hop:" + hop) for hop in asked]
                    if any(key not in done for key in keys):
                        for key, value in zip(
                            keys, model.score((c.chunk.title, c.chunk.text), asked), strict=True
                        ):
                            done[key] = value
                            fh.write(json.dumps({"key": key, "score": value}) + "\n")
                        count += 1
                    per_hop[:, j] = [done[key] for key in keys]
                z = _z(per_hop)
                forms = {
                    "hoptitle": z[:-1].max(0),
                    "hoptitle-later": _best(z[:-1], later),
                    "hoptitle-whole": z.max(0),
                    "wholetitle": z[-1],
                }
                for form, values in forms.items():
                    if values is None:
                        continue
                    for c, v in zip(ranked, values, strict=True):
                        fh.write(
                            json.dumps({"key": qlik_key(s.data, q.qid, c, form), "score": float(v)}) + "\n"
                        )
                fh.flush()
            print(f"lm {s.data}: {count} passages scored, {time.time() - began:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    den = commands.add_parser("dense", help="each passage's cosine to the hop questions")
    den.add_argument("packs", nargs="+")
    den.add_argument("--data-dir", required=True, help="a pool whose settings name the embedder")
    den.add_argument("--out", required=True)
    lik = commands.add_parser(
        "qlik", help="each hop question's likelihood after the recorded order's first passages"
    )
    lik.add_argument("packs", nargs="+")
    lik.add_argument("--top", type=int, default=10)
    lik.add_argument("--threads", type=int, default=1)
    lik.add_argument("--chars", type=int, default=1500, help="a passage's first characters the LM reads")
    lik.add_argument("--out", required=True)
    show = commands.add_parser("show", help="print each question's hop questions")
    show.add_argument("packs", nargs="+")
    args = parser.parse_args()
    sets = load_recorded(args.packs)
    if args.command == "dense":
        dense(sets, args.data_dir, args.out)
    elif args.command == "qlik":
        lm(sets, args.top, args.out, args.threads, args.chars)
    else:
        for s in sets:
            for q in s.questions:
                hops, later = hop_questions(q)
                print(q.qid, json.dumps(dict(zip(hops, later, strict=True))))


if __name__ == "__main__":
    main()
