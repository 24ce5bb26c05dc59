"""The front matter a question about the source needs: each leading document's first passage in the pack.

"Who wrote the report?", "Which course was this project done for?" (:func:`deepcite.front_matter.asks_about_source`)
are answered by a title page, a byline or a first slide, which shares few words with the question: plain search
ranked a report's byline past the 50th passage. The pack's first ``selection.front_matter_docs`` documents' first
passages (position 0) are fetched by a search restricted to them and placed from ``selection.front_matter_place`` on.
"""

from __future__ import annotations

from deepcite.errors import DeepciteError
from deepcite.front_matter import asks_about_source
from deepcite.models import Candidate, Filters, Provenance
from deepcite.research.nodes.base import Adapters
from deepcite.research.state import ExecutorState


def with_front_matter(
    state: ExecutorState, adapters: Adapters, final: list[Candidate]
) -> tuple[list[Candidate], str | None]:
    """``final`` with the first passages of its leading documents placed from ``selection.front_matter_place`` on,
    when the question asks about the source (one already placed before stays; one after moves up), capped at
    ``selection.max_total_docs``; and a warning when the search for them failed."""
    selection = adapters.settings.selection
    question = state.plan.question
    if not selection.front_matter_docs or not final or not asks_about_source(question):
        return final, None
    docs = list(dict.fromkeys(c.chunk.doc_id for c in final))[: selection.front_matter_docs]
    plan_filters = state.plan.intake.filters or Filters()
    within = plan_filters.model_copy(
        update={"doc_ids": docs, "equals": {**plan_filters.equals, "position": 0}}
    )
    mode = adapters.settings.retrieval.modes[0]
    try:
        hits = adapters.retriever.search(question, mode=mode, k=len(docs), filters=within, anchors=False)
    except DeepciteError as exc:
        return final, f"the documents' first passages were not fetched: {exc}"
    at = selection.front_matter_place - 1
    placed = {c.key: c for c in final}
    ahead = {c.key for c in final[:at]}
    first = {hit.chunk.doc_id: hit for hit in hits if (hit.chunk.doc_id, hit.chunk.chunk_id) not in ahead}
    moved = [
        placed.get((hit.chunk.doc_id, hit.chunk.chunk_id))
        or Candidate(
            chunk=hit.chunk,
            provenance=[
                Provenance(
                    round=state.round,
                    query=question,
                    kind="front_matter",
                    mode=str(mode),
                    subquestion=question,
                    rank=hit.rank,
                    score=float(hit.score),
                )
            ],
        )
        for doc in docs
        if (hit := first.get(doc)) is not None
    ]
    keys = {c.key for c in moved}
    rest = [c for c in final[at:] if c.key not in keys]
    return [*final[:at], *moved, *rest][: selection.max_total_docs], None
