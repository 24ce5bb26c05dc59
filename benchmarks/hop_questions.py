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
    # the sentence reader (answer/reader.py's cross-encoder) reading each hop question with each passage, or with
    # each of its sentences (--by-sentence, the best kept): forms hopreader{p,s}, hopreader{p,s}-whole,
    # wholereader{p,s}, the logits z-scored per hop as the LM's are
    .venv/bin/python benchmarks/hop_questions.py reader /tmp/musique-train.packs /tmp/hotpotqa-train.packs \
        --top 10 --by-sentence --out /tmp/train.hops
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
from collections.abc import Iterator, Sequence
from typing import TextIO

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


def _composed(
    sets: Sequence[RecordedSet], top: int
) -> Iterator[tuple[RecordedSet, Recorded, list, list[str], list[bool]]]:
    """Each recorded question that decomposes into hops: its set, itself, the recorded order's first ``top``
    passages, its hop questions with the whole question last, and per hop whether it is a filled later hop."""
    for s in sets:
        ranking = EvidenceRankingSettings(**s.ranking)
        for q in s.questions:
            hops, later = hop_questions(q)
            if len(hops) >= 2:  # no hops: the whole question's likelihood, order_replay.py's title form
                yield s, q, ordered(s, q, ranking)[:top], [*hops, q.question], later


def _write_forms(fh: TextIO, s: RecordedSet, q: Recorded, ranked: Sequence, forms: dict) -> None:
    """Each form's score of each of ``ranked`` as a cache line (a form of None left out)."""
    for form, values in forms.items():
        if values is None:
            continue
        for c, v in zip(ranked, values, strict=True):
            fh.write(json.dumps({"key": qlik_key(s.data, q.qid, c, form), "score": float(v)}) + "\n")


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
        for s, q, ranked, asked, later in _composed(sets, top):
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
            _write_forms(fh, s, q, ranked, forms)
            fh.flush()
    print(f"lm: {count} passages scored, {time.time() - began:.0f} s", flush=True)


def read(sets: Sequence[RecordedSet], top: int, out: str, tokens: int, by_sentence: bool) -> None:
    """The reader forms of each question's first ``top`` passages in the recorded order, appended to ``out``: the
    sentence reader (answer/reader.py, the cross-encoder the writer's opening uses) reads each hop question with the
    titled passage (``by_sentence``: with each of its sentences, the best kept), its probability as a logit;
    ``hopreader`` the best over the hop questions of the logits z-scored per hop, ``hopreader-whole`` with the whole
    question's among them, ``wholereader`` the whole question's alone (each raw hop's logit cached as
    ``rhop:<hop question>``)."""
    from deepcite.answer.reader import SentenceReader
    from deepcite.text import split_sentences

    reader = SentenceReader("all-MiniLM-L6-v2", tokens, 200_000)
    tag = "s" if by_sentence else "p"
    began, count = time.time(), 0
    with open(out, "a", encoding="utf-8") as fh:
        for s, q, ranked, asked, _ in _composed(sets, top):
            per_hop = np.zeros((len(asked), len(ranked)))
            for j, c in enumerate(ranked):
                texts = (
                    [f"{c.chunk.title}: {t}" for t in split_sentences(c.chunk.text)] or [c.chunk.title]
                    if by_sentence
                    else [f"{c.chunk.title}: {c.chunk.text}"]
                )
                for i, hop in enumerate(asked):
                    p = np.clip(reader.read(hop, texts), 1e-6, 1 - 1e-6)
                    per_hop[i, j] = float(np.log(p / (1 - p)).max())
                count += 1
            z = _z(per_hop)
            raw = {f"rhop{tag}:{hop}": per_hop[i] for i, hop in enumerate(asked)}
            forms = {
                f"hopreader{tag}": z[:-1].max(0),
                f"hopreader{tag}-whole": z.max(0),
                f"wholereader{tag}": z[-1],
            }
            _write_forms(fh, s, q, ranked, raw | forms)
            fh.flush()
    print(f"reader: {count} passages read, {time.time() - began:.0f} s", flush=True)


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
    rd = commands.add_parser("reader", help="each hop question read with the recorded order's first passages")
    rd.add_argument("packs", nargs="+")
    rd.add_argument("--top", type=int, default=10)
    rd.add_argument("--tokens", type=int, default=96, help="question and text together, the text truncated")
    rd.add_argument("--by-sentence", action="store_true", help="each sentence read apart, the best kept")
    rd.add_argument("--out", required=True)
    show = commands.add_parser("show", help="print each question's hop questions")
    show.add_argument("packs", nargs="+")
    args = parser.parse_args()
    sets = load_recorded(args.packs)
    if args.command == "dense":
        dense(sets, args.data_dir, args.out)
    elif args.command == "qlik":
        lm(sets, args.top, args.out, args.threads, args.chars)
    elif args.command == "reader":
        read(sets, args.top, args.out, args.tokens, args.by_sentence)
    else:
        for s in sets:
            for q in s.questions:
                hops, later = hop_questions(q)
                print(q.qid, json.dumps(dict(zip(hops, later, strict=True))))


if __name__ == "__main__":
    main()
