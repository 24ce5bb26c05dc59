"""The practitioner finder as data: named stages run in order over one request's state.

    from deepcite.practitioners.pipeline import FINDER_PIPELINE
    [s.name for s in FINDER_PIPELINE.stages]
    # ['analyse', 'merge_analyses', 'refuse_unknown_location', 'refuse_foreign_words', 'run_stage_a',
    #  'fill_from_intent', 'fill_from_specialties', 'run_stage_b', 'order_by_proximity',
    #  'reserve_specialty_slots', 'write_results']

Each stage (in :mod:`deepcite.practitioners.stages`) is a function ``stage(state, context)`` (a coroutine for
``analyse``) that reads and writes the :class:`FinderState` fields it declares and calls only what
:class:`FinderContext` holds: the settings, directory, profile index, semantic stage, taxonomy, catalogue and
LLM. A stage that answers the request early sets ``state.done``. Its time is added to the response's timing
it is listed under (``analysis``, ``stage_a`` or ``stage_b``). Swap a stage with
:meth:`FinderPipeline.replaced`; the runner never changes.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, replace

from deepcite.errors import ConfigError
from deepcite.practitioners.api import PractitionerSearchResponse, Timings
from deepcite.practitioners.context import EXAMPLES, FinderContext, FinderState, Stage, response_of, stage
from deepcite.practitioners.stages import (
    analyse,
    fill_from_intent,
    fill_from_specialties,
    merge_analyses,
    order_by_proximity,
    refuse_foreign_words,
    refuse_unknown_location,
    reserve_specialty_slots,
    run_stage_a,
    run_stage_b,
    write_results,
)

__all__ = ["EXAMPLES", "FINDER_PIPELINE", "FinderContext", "FinderPipeline", "FinderState", "Stage", "stage"]


@dataclass(frozen=True)
class FinderPipeline:
    """The finder's stages in order; :meth:`run` runs them until one answers early or all have run."""

    stages: tuple[Stage, ...]

    async def run(self, state: FinderState, context: FinderContext) -> PractitionerSearchResponse:
        """Run the stages over ``state``; the response with each timing's milliseconds."""
        for step in self.stages:
            started = time.perf_counter()
            out = step(state, context)
            if inspect.isawaitable(out):
                await out
            state.timings[step.timing] += (time.perf_counter() - started) * 1000.0
            if state.done:
                break
        response = response_of(state)
        response.timings_ms = Timings(
            **{name: round(ms, 2) for name, ms in state.timings.items()}, semantic=state.semantic_ms
        )
        return response

    def replaced(self, name: str, new: Stage) -> FinderPipeline:
        """This pipeline with the stage called ``name`` swapped for ``new``."""
        names = [s.name for s in self.stages]
        if name not in names:
            raise ConfigError(f"no finder stage named {name!r}; the finder runs: {', '.join(names)}")
        index = names.index(name)
        return replace(self, stages=(*self.stages[:index], new, *self.stages[index + 1 :]))


FINDER_PIPELINE = FinderPipeline(
    stages=(
        analyse,
        merge_analyses,
        refuse_unknown_location,
        refuse_foreign_words,
        run_stage_a,
        fill_from_intent,
        fill_from_specialties,
        run_stage_b,
        order_by_proximity,
        reserve_specialty_slots,
        write_results,
    )
)
