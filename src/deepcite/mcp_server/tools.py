"""deepcite as an MCP server: any MCP client (a desktop assistant, an agent) can search, research, ask and
find practitioners over the user's own collections.

Usage::

    deepcite mcp                      # stdio, for desktop clients that start the server themselves
    deepcite mcp --http --port 8765   # streamable HTTP on http://127.0.0.1:8765/mcp

    from deepcite import Engine, Settings
    from deepcite.mcp_server import build_server
    build_server(Engine(Settings.load())).run("stdio")

Each tool is a module-level function returning a pydantic model, so clients get its output schema
(structured output). The tools are thin: each takes the :class:`~deepcite.engine.Engine` from the
server's lifespan context and calls it; limits are checked by the shared request models. A failed call
(unknown collection, bad filter, empty question, ``k`` out of range, invalid arguments) comes back as a tool
error whose text is the message the HTTP API gives for the same failure
(:func:`deepcite.public_errors.public_error`). What a caller may read: :func:`caller_groups` (over HTTP, the
API's bearer tokens; never every group by default).
"""

# no `from __future__ import annotations`: the MCP SDK reads the tools' annotations when they are registered
import asyncio
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from deepcite.access import ALL_GROUPS, Authenticator, UnauthorizedError
from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.errors import ConfigError
from deepcite.models import Candidate, CollectionInfo, CoverageReport, Filters, RoundReport, SearchMode
from deepcite.practitioners.api import ChatMessage, PractitionerQuery, PractitionerSearchResponse
from deepcite.public_errors import public_error
from deepcite.saved_answers import SavedAnswer, SavedAnswerList
from deepcite.service import AskResponse, Groups, Passage, QuestionRequest, SearchRequest, SearchResponse
from deepcite.version import __version__

INSTRUCTIONS = """deepcite answers questions from the user's own document collections (for example PubMed
abstracts) with every sentence tied to a numbered passage. Use `ask` for a cited answer, `research` for the
evidence and how well it covers the question, `search` for a quick ranked list of passages, and
`list_collections` to see what can be searched. Every answer is saved: `saved_answers` lists a collection's
past questions, `saved_answer` reads one back, `rerun_answer` asks it again against the collection as it is
now (saying which cited passages changed) and `delete_saved_answer` removes one. `find_practitioners` matches a patient's request to
clinicians in the user's practitioner directory. Quote the [n] citations and their titles/PMIDs/URLs when you
pass an answer on; do not add claims the passages do not support."""


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


# -- helpers ---------------------------------------------------------------------------------------------------
def _engine(ctx: Context) -> Engine:
    """The Engine the server's lifespan holds."""
    return ctx.request_context.lifespan_context


def _groups(ctx: Context) -> Groups:
    """The ACL groups of this call's caller (:func:`caller_groups` of the request's headers)."""
    return caller_groups(_engine(ctx).settings, ctx.headers)


def caller_groups(settings: Settings, headers: Mapping[str, str] | None) -> Groups:
    """What a caller of the MCP server may read (``None``: everything).

    Over stdio (no headers) the caller is the data dir's own user: ``mcp.groups`` (unset: everything). Over
    HTTP with ``api_keys`` the caller is its bearer token's groups (as on the HTTP API), narrowed to
    ``mcp.groups`` when that is set; without keys (loopback only, see :func:`run`) it is ``mcp.groups``, and
    public documents only when that is unset: an HTTP client never reads every group by default.
    ``mcp.groups = ["*"]`` means every group.
    """
    configured = (
        None if settings.mcp.groups is not None and ALL_GROUPS in settings.mcp.groups else settings.mcp.groups
    )
    if headers is None:
        return configured
    authenticator = Authenticator(settings.api_keys)
    if not authenticator.enabled:
        return () if settings.mcp.groups is None else configured
    groups = authenticator.caller(headers.get("authorization")).groups
    if configured is None:
        return groups
    return tuple(configured) if groups is None else tuple(sorted(set(groups) & set(configured)))


class _Server(MCPServer):
    """The MCP server whose failed tool calls say what the HTTP API says for the same failure
    (:func:`~deepcite.public_errors.public_error`), never a bare "Error executing tool …"."""

    def __init__(self, *args: Any, data_dir: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._data_dir = data_dir

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            while isinstance(cause, ToolError):  # the SDK wraps what a tool raised, sometimes twice
                cause = cause.__cause__
            if cause is None:  # the SDK's own refusal (an unknown tool): its message says why
                raise
            error = public_error(cause, where=f"MCP tool {name}", data_dir=self._data_dir)
            raise ToolError(error.message) from cause


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def _passage(cand: Candidate, limit: int, in_final: bool) -> EvidencePassage:
    # the stored sentence offsets point into the whole text, not into the cut one
    chunk = cand.chunk.model_copy(
        update={"text": _cut(cand.chunk.text, limit), "sentence_spans": None, "sentence_pages": None}
    )
    return EvidencePassage(
        **chunk.model_dump(),
        score=round(float(cand.score), 6),
        in_final=in_final,
        llm_read_rounds=cand.llm_read_rounds,
    )


# -- the tools -------------------------------------------------------------------------------------------------
async def list_collections(ctx: Context) -> CollectionsResult:
    """The collections that can be searched, with how many passages each holds (an unreadable one says why)."""
    engine = _engine(ctx)
    collections = await asyncio.to_thread(engine.corpus.collections, _groups(ctx))
    return CollectionsResult(collections=collections, default=engine.settings.server.default_collection)


async def search(
    ctx: Context,
    query: Annotated[str, Field(description="What to look for.")],
    collection: CollectionArg = None,
    mode: Annotated[
        Literal["bm25", "dense", "hybrid"],
        Field(description="bm25: exact words; dense: meaning; hybrid: both fused (best in general)."),
    ] = "hybrid",
    k: Annotated[
        int | None, Field(description="How many passages to return (default: search.default_k).")
    ] = None,
    filters: Annotated[ToolFilters | None, Field(description="Optional limits: years, sources, ids.")] = None,
) -> SearchResponse:
    """One ranked search of a collection, without planning or answering: passages with their title,
    section, PMID/DOI, year, score and text. Fast; use it to look something up or check a fact."""
    engine = _engine(ctx)
    request = SearchRequest(
        query=query,
        collection=collection,
        mode=SearchMode.from_str(mode),
        k=k,
        filters=filters.to_filters() if filters else None,
    )
    found = await asyncio.to_thread(engine.search, request, _groups(ctx))
    limit = engine.settings.mcp.max_passage_chars
    for hit in found.hits:
        hit.text = _cut(hit.text, limit)
    return found


async def research(
    ctx: Context, question: QuestionArg, collection: CollectionArg = None, max_hops: MaxHopsArg = None
) -> ResearchResponse:
    """Plan the question into aspects and sub-questions and retrieve over several hops until the core
    aspects are covered. Returns the evidence pack (passages, each sub-question's own evidence as
    chunk ids), the coverage per aspect and the per-hop retrieval report. No prose answer: use `ask`."""
    engine = _engine(ctx)
    request = QuestionRequest(query=question, collection=collection, max_hops=max_hops)
    result = await engine.research(request, _groups(ctx))
    pack = result.pack
    limit = engine.settings.mcp.max_passage_chars
    rows: dict[str, EvidencePassage] = {}
    for cand in pack.final_evidence:
        rows.setdefault(cand.chunk.chunk_id, _passage(cand, limit, in_final=True))
    subquestions = []
    for sub, cands in pack.subquery_evidence.items():
        for cand in cands:
            rows.setdefault(cand.chunk.chunk_id, _passage(cand, limit, in_final=False))
        subquestions.append(SubquestionEvidence(subquestion=sub, chunk_ids=[c.chunk.chunk_id for c in cands]))
    return ResearchResponse(
        question=result.question,
        collection=engine.corpus.name(collection),
        hops=result.hops,
        stop_reason=pack.stop_reason,
        coverage=result.coverage,
        evidence=list(rows.values()),
        subquestions=subquestions,
        retrieval_report=[
            HopReport(**r.model_dump(exclude={"selected"}), selected=len(r.selected))
            for r in pack.retrieval_report
        ],
        errors=pack.errors,
        warnings=pack.warnings,
    )


async def ask(
    ctx: Context, question: QuestionArg, collection: CollectionArg = None, max_hops: MaxHopsArg = None
) -> AskResponse:
    """Research the question, then answer it from the evidence only: a 3-5 sentence quick summary, a
    longer answer by aspect, and an answer per sub-question. Every sentence cites [n], and `citations`
    lists each n with its title, PMID/DOI/URL, section, score, passage text and `quote`: the sentence(s) of
    the passage that support the claim citing it (text[quote_start:quote_end]). Claims the passages do
    not support read "Unknown based on provided sources."; with no evidence at all the answer says the
    evidence is insufficient. Takes a few seconds."""
    engine = _engine(ctx)
    request = QuestionRequest(query=question, collection=collection, max_hops=max_hops)
    response = await engine.ask(request, _groups(ctx))
    return _brief(response, engine.settings.mcp.max_passage_chars)


def _brief(response: AskResponse, limit: int) -> AskResponse:
    """The response without its retrieval report, passage texts cut (never inside the quote: its offsets
    stay true)."""
    citations = [
        c.model_copy(update={"text": _cut(c.text, max(limit, c.quote_end))}) for c in response.citations
    ]
    return response.model_copy(update={"retrieval_report": [], "citations": citations})


def _brief_saved(saved: SavedAnswer, limit: int) -> SavedAnswer:
    """A saved answer as a tool returns it: the response brief, the evidence pack's passages left out (the
    citations hold the passages the answer cites)."""
    pack = saved.pack.model_copy(update={"final_evidence": [], "subquery_evidence": {}})
    return saved.model_copy(update={"response": _brief(saved.response, limit), "pack": pack})


async def saved_answers(ctx: Context, collection: CollectionArg = None) -> SavedAnswerList:
    """The newest saved answers of a collection (every `ask` is saved): id, question, time, how many
    passages it cites. Read one with saved_answer."""
    engine = _engine(ctx)
    return await asyncio.to_thread(engine.saved.list, collection, _groups(ctx))


async def saved_answer(ctx: Context, answer_id: AnswerIdArg) -> SavedAnswer:
    """One saved answer: the question as asked, the settings used, the answer with its citations and
    quotes, the citation check's counts, and for a re-run which cited passages changed."""
    engine = _engine(ctx)
    saved = await asyncio.to_thread(engine.saved.get, answer_id, _groups(ctx))
    return _brief_saved(saved, engine.settings.mcp.max_passage_chars)


async def rerun_answer(ctx: Context, answer_id: AnswerIdArg) -> SavedAnswer:
    """Ask a saved question again against the collection as it is now; the new answer is saved and its
    `changes` list which cited passages were added, removed or changed. Takes a few seconds."""
    engine = _engine(ctx)
    saved = await engine.answers.rerun(answer_id, _groups(ctx))
    return _brief_saved(saved, engine.settings.mcp.max_passage_chars)


async def delete_saved_answer(ctx: Context, answer_id: AnswerIdArg) -> DeletedAnswer:
    """Delete a saved answer you may read, by its id (the request_id of the answer); it cannot be undone."""
    engine = _engine(ctx)
    await asyncio.to_thread(engine.saved.delete, answer_id, _groups(ctx))
    return DeletedAnswer(deleted=answer_id)


async def find_practitioners(
    ctx: Context,
    request: Annotated[
        str,
        Field(
            min_length=1, description="The patient's request in their own words, e.g. 'I need SVT ablation'."
        ),
    ],
    location: Annotated[
        PractitionerLocation | None, Field(description="Only practitioners here (city/state/ZIP).")
    ] = None,
    limit: Annotated[int | None, Field(ge=1, le=100, description="How many practitioners to return.")] = None,
    messages: Annotated[
        list[ChatMessage] | None,
        Field(description="Earlier turns of the conversation (user and assistant), oldest first."),
    ] = None,
) -> PractitionerSearchResponse:
    """Match a patient's plain-language request (a procedure, diagnosis or symptoms) to clinicians in the
    practitioner directory. Returns `emergency` guidance first for a crisis or an emergency (pass it on
    before anything else), then ranked practitioners with specialty, organisation and address, each with
    its `explanation` (matched intent and terms, specialty matches, boosts and penalties with their sizes)
    and the specialty in plain words, plus how the request was understood."""
    engine = _engine(ctx)

    query = PractitionerQuery(
        userQuery=request,
        location=location.model_dump(exclude_none=True) if location else None,
        limit=limit,
        messages=messages or [],
    )
    return await engine.practitioners.find(query)


TOOLS: dict[str, tuple[str, Callable[..., Awaitable[BaseModel]]]] = {
    "list_collections": ("List collections", list_collections),
    "search": ("Search passages", search),
    "research": ("Research a question", research),
    "ask": ("Ask for a cited answer", ask),
    "find_practitioners": ("Find practitioners", find_practitioners),
    "saved_answers": ("List saved answers", saved_answers),
    "saved_answer": ("Read a saved answer", saved_answer),
}
# tools that change what is saved
WRITE_TOOLS: dict[str, tuple[str, Callable[..., Awaitable[BaseModel]]]] = {
    "rerun_answer": ("Re-run a saved answer", rerun_answer),
    "delete_saved_answer": ("Delete a saved answer", delete_saved_answer),
}


def build_server(engine: Engine | Settings) -> MCPServer:
    """The deepcite MCP server over ``engine`` (or a new Engine of these settings, closed with the server)."""
    owned = not isinstance(engine, Engine)
    engine = engine if isinstance(engine, Engine) else Engine(engine)
    settings = engine.settings

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[Engine]:
        engine.start()
        try:
            yield engine
        finally:
            if owned:
                engine.close()

    server = _Server(
        "deepcite",
        title="deepcite: cited answers from your own documents",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level=settings.mcp.log_level,
        lifespan=lifespan,
        data_dir=settings.data_dir,
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=settings.web.enabled)
    for name, (title, fn) in TOOLS.items():
        server.add_tool(fn, name=name, title=title, annotations=read_only, structured_output=True)
    writes = ToolAnnotations(read_only_hint=False, open_world_hint=settings.web.enabled)
    for name, (title, fn) in WRITE_TOOLS.items():
        server.add_tool(fn, name=name, title=title, annotations=writes, structured_output=True)
    return server


class _BearerGate:
    """ASGI middleware of the MCP server's HTTP app: with ``api_keys``, a request without a known bearer token
    gets the HTTP API's ``401`` before the MCP SDK reads it."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.authenticator.enabled:
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            try:
                self.authenticator.caller(header or None)
            except UnauthorizedError as exc:
                body = {"success": False, "error": type(exc).__name__, "message": str(exc)}
                refusal = JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(engine: Engine) -> ASGIApp:
    """The MCP server's streamable HTTP app (at ``mcp.path``) behind the API's bearer tokens (``api_keys``).
    ConfigError when ``mcp.host`` is not a loopback address and no token is configured: every group's
    documents would be open to the network."""
    settings = engine.settings
    authenticator = Authenticator(settings.api_keys)
    if not authenticator.enabled and not _loopback(settings.mcp.host):
        raise ConfigError(
            f"deepcite mcp --http would listen on {settings.mcp.host} with no bearer tokens; set "
            "DEEPCITE_API_KEYS (token:group1|group2, as for deepcite serve) or DEEPCITE_MCP_HOST=127.0.0.1"
        )
    server = build_server(engine)
    app = server.streamable_http_app(streamable_http_path=settings.mcp.path, host=settings.mcp.host)
    return _BearerGate(app, authenticator)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run(engine: Engine, *, http: bool = False, port: int | None = None) -> None:
    """Serve over stdio, or over streamable HTTP (:func:`http_app`) on ``settings.mcp.host`` (127.0.0.1) and
    ``port``.

    One Engine serves every session; it is closed when the server stops.
    """
    try:
        if not http:
            build_server(engine).run("stdio")
            return
        settings = engine.settings
        uvicorn.run(
            http_app(engine),
            host=settings.mcp.host,
            port=port or settings.mcp.port,
            log_level=settings.mcp.log_level.lower(),
        )
    finally:
        engine.close()
