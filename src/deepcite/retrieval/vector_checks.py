"""Dense vectors checked before they reach Qdrant's engine: one per chunk, the collection's dimension, finite;
a query vector present when the mode needs one. Each failure is an ``InputError`` saying what to do."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deepcite.errors import CollectionDamagedError, InputError
from deepcite.models import Chunk, SearchMode


def checked_vectors(
    name: str,
    dim: int | None,
    chunks: Sequence[Chunk],
    dense: Sequence[Sequence[float]] | np.ndarray | None,
) -> list[list[float]] | None:
    """One ``dim``-d finite vector per chunk as lists (``None`` for a BM25-only collection)."""
    if dim is None:
        if dense is not None and len(dense) and len(dense[0]):
            raise InputError(f"collection {name!r} is BM25-only (no dense vectors); pass dense=None")
        return None
    if dense is None:
        raise InputError(f"collection {name!r} needs one {dim}-d dense vector per chunk; got none")
    array = np.asarray(dense, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != len(chunks) or (len(chunks) and array.shape[1] != dim):
        raise InputError(
            f"collection {name!r} needs {len(chunks)} dense vectors of dimension {dim}; got shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise InputError("dense vectors contain NaN or infinity; check the embedder output")
    return array.tolist()


def checked_query_vector(
    name: str, dim: int | None, mode: SearchMode, vector: Sequence[float] | None
) -> list[float] | None:
    """The query's dense vector as a list for dense and hybrid modes (``None`` for BM25)."""
    if mode is SearchMode.BM25:
        return None
    if dim is None:
        raise InputError(f"collection {name!r} is BM25-only (no dense vectors); search it with mode bm25")
    if vector is None:
        raise InputError(f"{mode.value} search needs the query's dense vector; got none")
    dense = [float(x) for x in vector]
    if len(dense) != dim:
        raise InputError(f"query vector has dimension {len(dense)}; collection {name!r} expects {dim}")
    return dense


def checked_scores(name: str, mode: SearchMode, scores: Sequence[float], tolerance: float) -> None:
    """CollectionDamagedError unless every score is finite (and, for a dense search, a cosine within
    ``tolerance`` of [-1, 1]): damaged vector files give NaN, infinity or ~1e37, never a result."""
    array = np.asarray(scores, dtype=np.float64)
    if not np.isfinite(array).all():
        raise CollectionDamagedError(
            name, f"the {mode.value} search scored NaN or infinity: its vectors are damaged"
        )
    if mode is SearchMode.DENSE and array.size and np.abs(array).max() > 1 + tolerance:
        raise CollectionDamagedError(
            name,
            f"a dense search scored {np.abs(array).max():.3g}, beyond a cosine's 1: its dense vectors are damaged",
        )


def checked_dense_found(name: str, found: int, present: int) -> None:
    """CollectionDamagedError when a dense search found nothing among points its filter matches: Qdrant's engine
    drops a point whose score is NaN, so vector files overwritten with NaN give an empty result, not an error."""
    if present and not found:
        raise CollectionDamagedError(
            name, f"a dense search found none of {present} points: its dense vectors are damaged (NaN scores)"
        )


def damaged_vectors(vectors: Sequence[Sequence[float]], dim: int, tolerance: float) -> int:
    """How many stored cosine vectors are damaged: not ``dim`` long, not finite, or of norm further than
    ``tolerance`` from 1 (zeroed or overwritten)."""
    return sum(not _unit(np.asarray(v, dtype=np.float64), dim, tolerance) for v in vectors)


def _unit(array: np.ndarray, dim: int, tolerance: float) -> bool:
    if array.shape != (dim,) or not np.isfinite(array).all():
        return False
    return abs(float(np.linalg.norm(array)) - 1.0) <= tolerance
