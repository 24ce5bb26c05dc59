"""``deepcite collections check``: read a whole collection back and say what is damaged.

Usage::

    from deepcite.retrieval.check import check_collection

    report = check_collection(store, "papers")
    print(report.ok, report.problems, report.warnings)

Each step reads one part of the collection through Qdrant's engine: the metadata (dense dimension, BM25
statistics), the point count, every payload, every dense vector, and one BM25 search. A step Qdrant's engine
cannot do is a problem (the collection is damaged), and so are fewer points than the metadata counts (a
segment lost); more points than counted, or other differing statistics, are a warning (a write cut short:
the next write rebuilds them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from deepcite.errors import (
    CollectionBusyError,
    CollectionDamagedError,
    CollectionNotFoundError,
    DeepciteError,
)
from deepcite.models import SearchMode
from deepcite.retrieval.points import LENGTH_KEY, payload_chunk
from deepcite.retrieval.qdrant_engine_store import QdrantEngineStore
from deepcite.retrieval.vector_checks import damaged_vectors


class CollectionCheck(BaseModel):
    """What ``check_collection`` found: counts read back, problems (damage) and warnings."""

    name: str
    points: int | None = None
    payloads_read: int = 0
    vectors_read: int = 0
    dense_dim: int | None = None
    problems: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _step(report: CollectionCheck, what: str, run: Callable[[], Any]) -> Any:
    """Run one step; a failure of Qdrant's engine becomes a problem naming the step (a busy collection is
    raised)."""
    try:
        return run()
    except CollectionBusyError:
        raise
    except CollectionDamagedError as exc:
        report.problems.append(f"{what}: {exc.what}")
    except DeepciteError as exc:
        report.problems.append(f"{what}: {exc}")
    return None


def check_collection(store: QdrantEngineStore, name: str) -> CollectionCheck:
    """Read every part of collection ``name`` back; raises CollectionNotFoundError or CollectionBusyError."""
    if not store.has_collection(name):  # the name is checked before any file is read
        raise CollectionNotFoundError(name, store.list_collections())
    report = CollectionCheck(name=name)
    meta = _step(report, "metadata", lambda: store.read_meta(name))
    if meta is None:
        return report
    report.dense_dim = meta.dense_dim
    report.points = _step(report, "counting points", lambda: store.qdrant_count(name, []))
    if report.points is None:
        return report
    payloads = _step(report, "reading payloads", lambda: list(store.qdrant_scroll(name, [])))
    if payloads is not None:
        total_len = 0
        for pid, payload in payloads:
            try:
                payload_chunk(payload)
                total_len += int(payload.get(LENGTH_KEY, 0))
                report.payloads_read += 1
            except (ValidationError, TypeError, ValueError):
                report.problems.append(f"payload of point {pid} is not a chunk")
        if report.payloads_read != report.points:
            report.problems.append(f"{report.points} points counted but {report.payloads_read} payloads read")
        if report.points < meta.bm25.n_docs:  # points lost (a segment gone), not a write cut short
            report.problems.append(
                f"the metadata counts {meta.bm25.n_docs} chunks but the index holds {report.points}: "
                f"{meta.bm25.n_docs - report.points} are missing"
            )
        elif (meta.bm25.n_docs, meta.bm25.total_len) != (report.points, total_len):
            report.warnings.append(
                f"BM25 statistics count {meta.bm25.n_docs} chunks of {meta.bm25.total_len} tokens, the points "
                f"{report.points} of {total_len}; the next write to the collection rebuilds them"
            )
        if meta.dense_dim:
            ids = [pid for pid, _ in payloads]
            size = store.settings.store.upsert_batch
            for start in range(0, len(ids), size):
                batch = ids[start : start + size]
                vectors = _step(report, "reading dense vectors", lambda b=batch: store.qdrant_dense(name, b))
                if vectors is None:
                    break
                report.vectors_read += len(vectors)
                wrong = damaged_vectors(
                    list(vectors.values()), meta.dense_dim, store.settings.store.vector_norm_tolerance
                )
                if wrong:
                    report.problems.append(
                        f"{wrong} dense vectors are damaged (not {meta.dense_dim}-d unit vectors: zeroed, overwritten "
                        "or not finite)"
                    )
            if report.vectors_read != len(ids) and not report.problems:
                report.problems.append(f"{len(ids) - report.vectors_read} points have no dense vector")
        if payloads:
            word = next((w for w in str(payloads[0][1].get("text", "")).split() if w.isalpha()), "the")
            _step(
                report,
                "searching (BM25)",
                lambda: store.search(name, text=word, vector=None, mode=SearchMode.BM25, k=3),
            )
    return report
