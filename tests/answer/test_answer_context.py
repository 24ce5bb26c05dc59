"""ResponseContext numbering and the ResponseContextManager store."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest

from answer.conftest import ASPECTS, QUESTION, SQ_DRUGS, SQ_RISK, candidate, make_pack
from deepcite.answer.context import ResponseContext, ResponseContextManager
from deepcite.config import AnswerSettings
from deepcite.errors import NotFoundError
from deepcite.models import EvidencePack


def test_selected_chunks_are_numbered_by_score(ctx: ResponseContext) -> None:
    assert [c.id for c in ctx.selected_chunks] == [1, 2, 3, 4, 5, 6]
    assert [c.chunk_id for c in ctx.selected_chunks] == ["c1", "c2", "c3", "c4", "c5", "c6"]
    first = ctx.selected_chunks[0]
    assert (first.title, first.pmid, first.section, first.score) == (
        "Atrial fibrillation and stroke",
        "1001",
        "Results",
        0.9,
    )
    assert ctx.selected_chunks[1].doi == "10.1000/af.2"
    assert ctx.query == QUESTION
    assert ctx.request_id == "req-1"
    assert ctx.aspects == ASPECTS


def test_order_follows_score_not_input_order(settings: AnswerSettings) -> None:
    pack = make_pack(final=("c6", "c3", "c1"), subquestions={})
    ctx = ResponseContext.from_pack(pack, settings)
    assert [(c.id, c.chunk_id) for c in ctx.selected_chunks] == [(1, "c1"), (2, "c3"), (3, "c6")]
    assert len(ctx.request_id) == 32  # a fresh UUID when none is given


def test_cap_on_selected_chunks() -> None:
    pack = make_pack()
    ctx = ResponseContext.from_pack(pack, AnswerSettings().tuned(context={"max_chunks": 3}))
    assert [c.chunk_id for c in ctx.selected_chunks] == ["c1", "c2", "c3"]


def test_duplicates_keep_their_best_score(settings: AnswerSettings) -> None:
    pack = EvidencePack(
        question="q", final_evidence=[candidate("c4", 0.1), candidate("c1"), candidate("c4", 0.95)]
    )
    ctx = ResponseContext.from_pack(pack, settings)
    assert [(c.chunk_id, c.score) for c in ctx.selected_chunks] == [("c4", 0.95), ("c1", 0.9)]


def test_subquestion_evidence_uses_the_global_numbering(ctx: ResponseContext) -> None:
    risk = ctx.subquery_evidence[SQ_RISK]
    drugs = ctx.subquery_evidence[SQ_DRUGS]
    # c1 and c5 are selected and keep their ids; c7 is not selected and gets the next free id, 7
    assert [(c.chunk_id, c.id) for c in risk] == [("c1", 1), ("c5", 5), ("c7", 7)]
    assert [(c.chunk_id, c.id) for c in drugs] == [("c2", 2), ("c3", 3)]
    assert [c.id for c in ctx.all_chunks()] == [1, 2, 3, 4, 5, 6, 7]


def test_subquestion_extras_beyond_the_selection_cap(settings: AnswerSettings) -> None:
    pack = make_pack(final=("c1", "c2", "c3"), subquestions={"a": ("c7", "c1"), "b": ("c4", "c7", "c6")})
    ctx = ResponseContext.from_pack(pack, AnswerSettings().tuned(context={"max_chunks": 2}))
    assert [c.chunk_id for c in ctx.selected_chunks] == ["c1", "c2"]
    assert [(c.chunk_id, c.id) for c in ctx.subquery_evidence["a"]] == [("c1", 1), ("c7", 3)]
    assert [(c.chunk_id, c.id) for c in ctx.subquery_evidence["b"]] == [("c4", 4), ("c7", 3), ("c6", 5)]
    ids = [c.id for c in ctx.all_chunks()]
    assert ids == sorted(set(ids)) == [1, 2, 3, 4, 5]


def test_subquestion_cap() -> None:
    pack = make_pack(subquestions={"a": ("c1", "c2", "c3", "c4")})
    ctx = ResponseContext.from_pack(pack, AnswerSettings().tuned(context={"max_subquery_chunks": 2}))
    assert [c.chunk_id for c in ctx.subquery_evidence["a"]] == ["c1", "c2"]


def test_empty_pack_gives_an_empty_context(settings: AnswerSettings) -> None:
    ctx = ResponseContext.from_pack(EvidencePack(question="q"), settings)
    assert ctx.is_empty() and ctx.all_chunks() == []
    assert not ResponseContext.from_pack(
        make_pack(final=(), subquestions={"a": ("c1",)}), settings
    ).is_empty()


def test_explicit_aspects_override_the_pack(settings: AnswerSettings) -> None:
    assert ResponseContext.from_pack(make_pack(), settings, aspects=[]).aspects == []


def test_context_round_trips_through_json(ctx: ResponseContext) -> None:
    assert ResponseContext.model_validate_json(ctx.model_dump_json()) == ctx


class FakeClock:
    """Monotonic seconds that the test moves by hand (no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _ctx(request_id: str) -> ResponseContext:
    return ResponseContext(request_id=request_id, query="q")


def test_manager_put_get_delete() -> None:
    manager = ResponseContextManager(AnswerSettings())
    assert manager.put(_ctx("a")) == "a"
    assert manager.get("a").request_id == "a"
    assert manager.size() == 1
    with pytest.raises(NotFoundError, match="'missing'"):
        manager.get("missing")
    assert manager.delete("a") and not manager.delete("a")
    assert manager.size() == 0


def test_manager_expires_by_ttl() -> None:
    clock = FakeClock()
    manager = ResponseContextManager(AnswerSettings().tuned(context={"ttl_s": 60}), clock=clock)
    manager.put(_ctx("old"))
    clock.now += 30
    manager.put(_ctx("new"))
    clock.now += 30  # "old" is now 60 s old
    with pytest.raises(NotFoundError, match="expired"):
        manager.get("old")
    assert manager.get("new").request_id == "new"
    clock.now += 30
    assert manager.cleanup() == 1
    assert manager.size() == 0


def test_manager_evicts_oldest_past_max_count() -> None:
    manager = ResponseContextManager(AnswerSettings().tuned(context={"max_count": 3}))
    for rid in "abcde":
        manager.put(_ctx(rid))
    assert manager.size() == 3
    with pytest.raises(NotFoundError):
        manager.get("a")
    assert [manager.get(r).request_id for r in "cde"] == ["c", "d", "e"]


def test_replacing_a_context_refreshes_its_place() -> None:
    manager = ResponseContextManager(AnswerSettings().tuned(context={"max_count": 2}))
    manager.put(_ctx("a"))
    manager.put(_ctx("b"))
    manager.put(_ctx("a"))
    manager.put(_ctx("c"))
    assert manager.get("a") and manager.get("c")
    with pytest.raises(NotFoundError):
        manager.get("b")


def test_background_cleanup_thread_evicts_expired() -> None:
    clock = FakeClock()
    manager = ResponseContextManager(
        AnswerSettings().tuned(context={"ttl_s": 10, "cleanup_interval_s": 0.01}), clock=clock
    )
    manager.put(_ctx("a"))
    manager.start()
    manager.start()  # idempotent
    try:
        assert manager.running
        clock.now += 11
        deadline = time.monotonic() + 10  # a bound on waiting, not a timing assertion
        while manager.size() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert manager.size() == 0
    finally:
        manager.stop()
    assert not manager.running


def test_concurrent_threads_respect_the_cap() -> None:
    manager = ResponseContextManager(AnswerSettings().tuned(context={"max_count": 50}))
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(300):
                rid = f"{n}-{i}"
                manager.put(_ctx(rid))
                with contextlib.suppress(NotFoundError):  # evicted by another thread's puts: allowed
                    manager.get(rid)
                assert manager.size() <= 50
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert manager.size() == 50


async def test_concurrent_asyncio_tasks() -> None:
    manager = ResponseContextManager(AnswerSettings())

    async def request(i: int) -> str:
        rid = manager.put(_ctx(f"task-{i}"))
        await asyncio.sleep(0)
        return manager.get(rid).request_id

    ids = await asyncio.gather(*(request(i) for i in range(100)))
    assert ids == [f"task-{i}" for i in range(100)]
    assert manager.size() == 100
