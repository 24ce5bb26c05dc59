"""Where the research's recall@5 misses are: for every supporting passage a question's evidence pack does not rank
in its top 5, whether the pack holds it lower down (a ranking miss), the question's own first-round search finds it
(BM25, dense or hybrid, top 20 or top 50) though no round selected it, or nothing reached it, and then whether a
bridge candidate the beam held names its page (the bridge was right, its search missed) or none does.

    .venv/bin/python benchmarks/multihop_misses.py --data ../shared/datasets/hipporag_musique/musique_train.json \
        --data-dir <pool> [--profile default] [--list]

The pool is the one ``deepcite eval multihop`` builds (``--data-dir``). Run it on train sets only: its per-question
list is read to find a cause.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.config import Settings  # noqa: E402
from deepcite.engine import Engine  # noqa: E402
from deepcite.evaluation.multihop import BRIDGE_PREFIX_WORDS, ingest_pool, load_questions  # noqa: E402
from deepcite.evaluation.profiles import load_profile, profile_settings  # noqa: E402
from deepcite.models import SearchMode  # noqa: E402
from deepcite.research.nodes.select_evidence import page_named  # noqa: E402
from deepcite.service import QuestionRequest, SearchRequest  # noqa: E402

FIRST_ROUND_K = 50
NEAR = 20


def where(rank: int | None, first: dict[str, int | None], bridges: list[str], title: str | list[str]) -> str:
    """The miss's category: the pack's place, the question's own search, or the beam (``title``: the passage's
    page, or the pages it may be when nothing reached it)."""
    if rank is not None:
        return "in the pack at 6-10" if rank <= 10 else "in the pack below 10"
    found = [r for r in first.values() if r is not None]
    if found:
        return (
            f"first-round top {NEAR}, never selected"
            if min(found) <= NEAR
            else "first-round 21-50, never selected"
        )
    pages = [title] if isinstance(title, str) else title
    if any(page_named(t, b, BRIDGE_PREFIX_WORDS) for t in pages for b in bridges):
        return "never reached, a bridge candidate named its page"
    return "never reached, no bridge candidate named its page"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--profile", default="default")
    parser.add_argument("--list", action="store_true", help="print each missing passage")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    questions = load_questions(args.data)
    engine = Engine(settings)
    pool = ingest_pool(engine, args.data, questions.format)
    research = engine.sharing(profile_settings(settings, load_profile(args.profile)))
    counts: Counter[str] = Counter()
    missed_questions = gold_total = 0
    for q in questions.questions:
        pack = research.research_sync(QuestionRequest(query=q.question, collection=pool)).pack
        ranked = list(dict.fromkeys(c.chunk.doc_id for c in pack.final_evidence))
        titles = {c.chunk.doc_id: c.chunk.title for c in pack.final_evidence}
        gold_total += len(q.gold)
        missing = q.gold - set(ranked[:5])
        missed_questions += bool(missing)
        if not missing:
            continue
        first = {}
        for mode in (SearchMode.BM25, SearchMode.DENSE, SearchMode.HYBRID):
            request = SearchRequest(query=q.question, collection=pool, mode=mode, k=FIRST_ROUND_K)
            hits = engine.search(request).hits
            first[mode.value] = [h.doc_id for h in hits]
            titles |= {h.doc_id: h.title for h in hits}
        bridges = [b.name for b in pack.bridges]
        # a passage nothing reached has no title at hand: the supporting titles no found passage has
        unseen = sorted(q.gold_titles - {titles[g] for g in q.gold if g in titles})
        for gold in missing:
            rank = ranked.index(gold) + 1 if gold in ranked else None
            at = {m: hits.index(gold) + 1 if gold in hits else None for m, hits in first.items()}
            title = titles.get(gold) or " / ".join(unseen)
            kind = where(rank, at, bridges, titles.get(gold) or unseen)
            counts[kind] += 1
            if args.list:
                print(f"{q.qid}: {title!r} {kind} (pack {rank}, first round {at}; beam {bridges[:6]})")
    print(
        f"{len(questions.questions)} questions, {missed_questions} with a supporting passage below 5, "
        f"{sum(counts.values())} of {gold_total} supporting passages below 5:"
    )
    for kind, n in counts.most_common():
        print(f"  {n:3d}  {kind}")
    engine.close()


if __name__ == "__main__":
    main()
