"""The MCP tools' inputs and outputs: pydantic models, so clients get each tool's schema."""

from typing import Annotated, Any

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from deepcite.models import CollectionInfo, CoverageReport, Filters, RoundReport
from deepcite.service import Passage


# -- tool inputs ---------------------------------------------------------------------------------------------
class ToolFilters(Filters):
    """Restrict a search to some passages; every field is optional and they combine with AND (checked as the
    HTTP API checks :class:`~deepcite.models.Filters`; ACL groups come from the server's ``mcp.groups``)."""

    year_from: int | None = Field(default=None, description="Only passages published in or after this year.")
    year_to: int | None = Field(default=None, description="Only passages published in or before this year.")
    sources: list[str] | None = Field(
        default=None, description="Only passages whose `source` is one of these."
    )
    doc_ids: list[str] | None = Field(default=None, description="Only passages of these document ids.")
    equals: dict[str, Any] = Field(
        default_factory=dict,
        description='Fields that must equal a value (or any of a list), e.g. {"section": "abstract"}.',
    )

    acl_groups: SkipJsonSchema[None] = None

    def to_filters(self) -> Filters:
        return Filters(**self.model_dump())


class PractitionerLocation(BaseModel):
    """Where the patient wants care; any part may be left out."""

    city: str | None = Field(default=None, description="City or town, e.g. Portland.")
    state: str | None = Field(default=None, description="US state, two letters or full name, e.g. ME.")
    zip: str | None = Field(default=None, description="Five-digit ZIP code.")


CollectionArg = Annotated[
    str | None,
    Field(description="Collection (see list_collections); default: the server's default collection."),
]
QuestionArg = Annotated[str, Field(description="The question, in plain words.")]
AnswerIdArg = Annotated[
    str, Field(min_length=1, description="A saved answer's id (an ask's request_id; see saved_answers).")
]
MaxHopsArg = Annotated[
    int | None,
    Field(description="At most this many research hops (1..the server's research.stopping.max_hops)."),
]


# -- tool outputs --------------------------------------------------------------------------------------------
class CollectionsResult(BaseModel):
    """The searchable collections and the default one."""

    collections: list[CollectionInfo]
    default: str


class DeletedAnswer(BaseModel):
    deleted: str


class EvidencePassage(Passage):
    """A passage of the evidence pack; ``in_final`` when it is in the final evidence, not only a sub-question's."""

    in_final: bool
    llm_read_rounds: list[int] = Field(
        default_factory=list,
        description="The hops after which the server's LLM said this passage states a fact the answer needs.",
    )


class SubquestionEvidence(BaseModel):
    subquestion: str
    chunk_ids: list[str] = Field(description="Chunk ids into `evidence`.")


class HopReport(RoundReport):
    """One research hop; ``selected`` counts the passages it selected."""

    selected: int  # type: ignore[assignment]


class ResearchResponse(BaseModel):
    """The evidence pack of a question: passages, each sub-question's own evidence, coverage and hops."""

    question: str
    collection: str
    hops: int
    stop_reason: str
    coverage: CoverageReport
    evidence: list[EvidencePassage]
    subquestions: list[SubquestionEvidence]
    retrieval_report: list[HopReport]
    errors: list[str]
    warnings: list[str]
