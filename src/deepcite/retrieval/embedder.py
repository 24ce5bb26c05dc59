"""The Embedder protocol: texts in, L2-normalised float32 rows out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into dense vectors; implementations batch internally and load their model once."""

    @property
    def dim(self) -> int: ...

    @property
    def name(self) -> str: ...

    def encode(self, texts: Sequence[str], *, kind: Literal["query", "passage"] = "passage") -> np.ndarray:
        """A ``(len(texts), dim)`` float32 array of unit-length rows."""
