"""The base of every settings section: unknown keys refused, and ``tuned`` for a copy with sub-sections
changed."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A settings section, filled by ``Settings``' sources; built alone it holds the defaults.

    Unknown keys are refused, from any source: a misspelt setting must not be ignored in silence.
    """

    model_config = ConfigDict(extra="forbid")

    def tuned(self, **sections: dict[str, Any]) -> Self:
        """A copy with fields of the named sub-sections replaced: ``research.tuned(stopping={"max_hops": 3})``."""
        return self.model_copy(
            update={name: getattr(self, name).model_copy(update=values) for name, values in sections.items()}
        )
