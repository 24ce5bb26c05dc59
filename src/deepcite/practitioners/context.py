"""What every finder stage shares: the collaborators it may call, one request's state, and the declaration of
the state fields a stage reads and writes.

A stage is a plain function ``stage(state, context)`` (a coroutine for ``analyse``) over :class:`FinderState`,
declared with :func:`stage` by the response timing its time counts to and the state fields it reads and writes.
The declaration is checked against the state's fields when the module loads, and a test runs every stage and
checks it changed nothing else. The stages never see the finder that runs them: only :class:`FinderContext`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from typing import Literal

from deepcite.config import PractitionerSettings
from deepcite.llm.client import LLMClient
from deepcite.practitioners.analysis import Analyses
from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.index import ProfileIndex
from deepcite.practitioners.location import Location
from deepcite.practitioners.merge import MergedIntent
from deepcite.practitioners.offline import Conversation
from deepcite.practitioners.ranking import PractitionerCandidate
from deepcite.practitioners.semantic import SemanticStage, SpecialtySimilarity
from deepcite.practitioners.taxonomy import Taxonomy

Timing = Literal["analysis", "stage_a", "stage_b"]
EXAMPLES = (
    "e.g. 'I need SVT ablation' or 'my knee hurts when I run'"  # closes every "say it otherwise" message
)


@dataclass(frozen=True)
class FinderContext:
    """The settings and collaborators the stages call; built once per finder. ``llm`` is ``None`` offline."""

    settings: PractitionerSettings
    directory: Directory
    index: ProfileIndex  # BM25 over the directory's profiles
    semantic: SemanticStage  # the patient's words against every specialty's names, definition and cues
    taxonomy: Taxonomy
    catalogue: Catalogue
    llm: LLMClient | None = None


@dataclass
class FinderState:
    """One request on its way through the stages: what was asked, and what each stage found."""

    request: PractitionerQuery
    conversation: Conversation
    notes: list[str]
    location: Location | None
    filtering: bool  # the location filters the results (otherwise it only orders them)
    limit: int
    year: int  # experience is counted to this year
    specialties: list[str]  # the directory's primary specialties
    analyses: Analyses | None = None
    proposals: list[SpecialtySimilarity] = field(default_factory=list)
    semantic_ms: float = 0.0
    merged: MergedIntent | None = None
    response: PractitionerSearchResponse | None = None
    candidates: list[PractitionerCandidate] = field(default_factory=list)
    ranked: list[PractitionerCandidate] = field(default_factory=list)
    nearby: Location | None = None  # results are ordered nearest first from here
    timings: dict[Timing, float] = field(
        default_factory=lambda: dict.fromkeys(("analysis", "stage_a", "stage_b"), 0.0)
    )
    done: bool = False

    @property
    def filter_location(self) -> Location | None:
        return self.location if self.filtering else None


STATE_FIELDS = frozenset(f.name for f in fields(FinderState))
StageRun = Callable[[FinderState, FinderContext], Awaitable[None] | None]


@dataclass(frozen=True)
class Stage:
    """A named step of the finder, the response timing its time counts to, and the state fields it reads and
    writes (``timings`` is the runner's)."""

    name: str
    run: StageRun
    timing: Timing
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = (self.reads | self.writes) - STATE_FIELDS
        if unknown:
            raise TypeError(f"finder stage {self.name} declares unknown state fields: {sorted(unknown)}")

    def __call__(self, state: FinderState, context: FinderContext) -> Awaitable[None] | None:
        return self.run(state, context)


def stage(timing: Timing, *, reads: tuple[str, ...], writes: tuple[str, ...]) -> Callable[[StageRun], Stage]:
    """Declare a function as a stage counted to ``timing``, reading and writing the named state fields."""

    def wrap(run: StageRun) -> Stage:
        return Stage(run.__name__, run, timing, frozenset(reads), frozenset(writes))

    return wrap


def analyses_of(state: FinderState) -> Analyses:
    if state.analyses is None:
        raise RuntimeError("a finder stage ran before 'analyse'")
    return state.analyses


def merged_of(state: FinderState) -> MergedIntent:
    if state.merged is None:
        raise RuntimeError("a finder stage ran before 'merge_analyses'")
    return state.merged


def response_of(state: FinderState) -> PractitionerSearchResponse:
    if state.response is None:
        raise RuntimeError("a finder stage ran before 'merge_analyses'")
    return state.response
