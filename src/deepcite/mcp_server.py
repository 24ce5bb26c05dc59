"""deepcite as an MCP server: any MCP client (a desktop assistant, an agent) can search, research, ask and
find practitioners over the user's own collections.

Usage::

    deepcite mcp                      # stdio, for desktop clients that start the server themselves
    deepcite mcp --http --port 8765   # streamable HTTP on http://127.0.0.1:8765/mcp

    from deepcite.mcp_server import build_server
    build_server().run("stdio")

The tools are thin: each calls :mod:`deepcite.service` (or the practitioner finder) and returns JSON.
A deepcite error (unknown collection, bad filter, empty question) comes back as a tool error whose text
says what was wrong and what to do. ``settings.mcp.groups`` restricts what every caller may read.
"""

# no `from __future__ import annotations`: the MCP SDK reads the tools' annotations (local Annotated
# aliases with limits from the settings) when they are registered
import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from deepcite import __version__, service
from deepcite.config import Settings, get_settings
from deepcite.errors import DeepciteError
from deepcite.models import Candidate, Chunk, Filters, SearchMode
from deepcite.server.resources import ServerResources

T = TypeVar("T")

INSTRUCTIONS = """deepcite answers questions from the user's own document collections (for example PubMed
abstracts) with every sentence tied to a numbered passage. Use `ask` for a cited answer, `research` for the
evidence and how well it covers the question, `search` for a quick ranked list of passages, and
`list_collections` to see what can be searched. `find_practitioners` matches a patient's request to
clinicians in the user's practitioner directory. Quote the [n] citations and their titles/PMIDs/URLs when you
pass an answer on; do not add claims the passages do not support."""


class ToolFilters(BaseModel):
    """Restrict a search to some passages; every field is optional and they combine with AND."""

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

    def to_filters(self) -> Filters:
        return Filters(**self.model_dump())


class PractitionerLocation(BaseModel):
    """Where the patient wants care; any part may be left out."""

    city: str | None = Field(default=None, description="City or town, e.g. Portland.")
    state: str | None = Field(default=None, description="US state, two letters or full name, e.g. ME.")
    zip: str | None = Field(default=None, description="Five-digit ZIP code.")


class _Shared:
    """The store, embedder and practitioner finder every tool call shares, opened on first use."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.resources = ServerResources(settings)
        self._finder: Any = None
        self._lock = threading.Lock()

    def finder(self) -> Any:
        from deepcite.llm.factory import get_llm
        from deepcite.practitioners.finder import PractitionerFinder

        with self._lock:
            if self._finder is None:
                self._finder = PractitionerFinder.open(
                    self.settings, llm=get_llm(self.settings), store=self.resources.store
                )
            return self._finder

    def close(self) -> None:
        with self._lock:
            if self._finder is not None:
                self._finder.directory.close()
                self._finder = None
        self.resources.close()


async def _tool_call(work: Callable[[], Awaitable[T]]) -> T:
    """Run a tool's work; deepcite's own errors and invalid input become tool errors the model can read."""
    try:
        return await work()
    except DeepciteError as exc:
        raise ToolError(str(exc)) from exc
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        raise ToolError(f"invalid input: {problems}") from exc


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


_PASSAGE_HIDDEN = {"acl", "metadata", "position", "text"}  # internal fields; text is cut below


def _passage(chunk: Chunk, score: float, limit: int) -> dict[str, Any]:
    """A passage of a tool result: every field a reader cites it by (file, page, page_end, section, title,
    authors, doi, pmid, year, url, …), its score, and its text cut to ``limit`` characters."""
    return {
        **chunk.model_dump(mode="json", exclude=_PASSAGE_HIDDEN),
        "score": round(float(score), 6),
        "text": _cut(chunk.text, limit),
    }


def _evidence(final: list[Candidate], per_sub: dict[str, list[Candidate]], limit: int) -> dict[str, Any]:
    """The pack's evidence once each, and each sub-question's own evidence as chunk ids into that list."""
    rows: dict[str, dict[str, Any]] = {}
    for cand in final:
        rows.setdefault(cand.chunk.chunk_id, {**_passage(cand.chunk, cand.score, limit), "in_final": True})
    subquestions = []
    for sub, cands in per_sub.items():
        for cand in cands:
            rows.setdefault(
                cand.chunk.chunk_id, {**_passage(cand.chunk, cand.score, limit), "in_final": False}
            )
        subquestions.append({"subquestion": sub, "chunk_ids": [c.chunk.chunk_id for c in cands]})
    return {"evidence": list(rows.values()), "subquestions": subquestions}


def build_server(settings: Settings | None = None) -> MCPServer:
    """The deepcite MCP server over ``settings`` (default: the process settings)."""
    settings = settings or get_settings()
    shared = _Shared(settings)
    cfg = settings.mcp
    groups = cfg.groups
    limit = cfg.max_passage_chars
    default_k = min(settings.search.default_k, cfg.max_k)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            shared.close()

    server = MCPServer(
        "deepcite",
        title="deepcite: cited answers from your own documents",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level=cfg.log_level,
        lifespan=lifespan,
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=settings.web.enabled)
    CollectionArg = Annotated[
        str | None,
        Field(
            description=f"Collection (see list_collections); default {settings.server.default_collection!r}."
        ),
    ]
    max_chars = settings.server.max_query_chars
    Question = Annotated[
        str, Field(min_length=1, max_length=max_chars, description="The question, in plain words.")
    ]
    MaxHops = Annotated[
        int | None, Field(ge=1, le=settings.research.max_hops, description="At most this many research hops.")
    ]

    @server.tool(title="List collections", annotations=read_only)
    async def list_collections() -> dict[str, Any]:
        """The collections that can be searched, with how many passages each holds."""

        async def work() -> dict[str, Any]:
            store = shared.resources.store
            restrict = service.restrict_filters(None, groups)
            names = await asyncio.to_thread(shared.resources.collection_names)
            names = [n for n in names if n != settings.practitioners.collection]  # the practitioner index
            rows = [{"name": n, "passages": await asyncio.to_thread(store.count, n, restrict)} for n in names]
            return {"collections": rows, "default": settings.server.default_collection}

        return await _tool_call(work)

    @server.tool(title="Search passages", annotations=read_only)
    async def search(
        query: Annotated[str, Field(min_length=1, max_length=max_chars, description="What to look for.")],
        collection: CollectionArg = None,
        mode: Annotated[
            Literal["bm25", "dense", "hybrid"],
            Field(description="bm25: exact words; dense: meaning; hybrid: both fused (best in general)."),
        ] = "hybrid",
        k: Annotated[int, Field(ge=1, le=cfg.max_k, description="How many passages to return.")] = default_k,
        filters: Annotated[
            ToolFilters | None, Field(description="Optional limits: years, sources, ids.")
        ] = None,
    ) -> dict[str, Any]:
        """One ranked search of a collection, without planning or answering: passages with their title,
        section, PMID/DOI, year, score and text. Fast; use it to look something up or check a fact."""

        async def work() -> dict[str, Any]:
            col = await asyncio.to_thread(shared.resources.collection, collection)
            hits = await asyncio.to_thread(
                service.search,
                query,
                collection=col,
                mode=SearchMode.from_str(mode),
                k=k,
                filters=filters.to_filters() if filters else None,
                groups=groups,
                settings=settings,
            )
            return {
                "collection": col.name,
                "query": query,
                "mode": mode,
                "hits": [{"rank": h.rank, **_passage(h.chunk, h.score, limit)} for h in hits],
            }

        return await _tool_call(work)

    @server.tool(title="Research a question", annotations=read_only)
    async def research(
        question: Question, collection: CollectionArg = None, max_hops: MaxHops = None
    ) -> dict[str, Any]:
        """Plan the question into aspects and sub-questions and retrieve over several hops until the core
        aspects are covered. Returns the evidence pack (passages, each sub-question's own evidence as
        chunk ids), the coverage per aspect and the per-hop retrieval report. No prose answer: use `ask`."""

        async def work() -> dict[str, Any]:
            col = await asyncio.to_thread(shared.resources.collection, collection)
            result = await service.research(
                question, collection=col, max_hops=max_hops, groups=groups, settings=settings
            )
            pack = result.pack
            return {
                "question": result.question,
                "collection": col.name,
                "hops": result.hops,
                "stop_reason": pack.stop_reason,
                "coverage": result.coverage.model_dump(mode="json"),
                **_evidence(pack.final_evidence, pack.subquery_evidence, limit),
                "retrieval_report": [
                    r.model_dump(mode="json", exclude={"selected"}) | {"selected": len(r.selected)}
                    for r in pack.retrieval_report
                ],
                "errors": pack.errors,
                "warnings": pack.warnings,
            }

        return await _tool_call(work)

    @server.tool(title="Ask for a cited answer", annotations=read_only)
    async def ask(
        question: Question, collection: CollectionArg = None, max_hops: MaxHops = None
    ) -> dict[str, Any]:
        """Research the question, then answer it from the evidence only: a 3-5 sentence quick summary, a
        longer answer by aspect, and an answer per sub-question. Every sentence cites [n], and `citations`
        lists each n with its title, PMID/DOI/URL, section, score and passage text. Claims the passages do
        not support read "Unknown based on provided sources."; with no evidence at all the answer says the
        evidence is insufficient. Takes a few seconds."""

        async def work() -> dict[str, Any]:
            col = await asyncio.to_thread(shared.resources.collection, collection)
            response = await service.ask(
                question, collection=col, max_hops=max_hops, groups=groups, settings=settings
            )
            body = response.model_dump(mode="json", exclude={"retrieval_report"})
            for citation in body["citations"]:
                citation["text"] = _cut(citation["text"], limit)
            return body

        return await _tool_call(work)

    @server.tool(title="Find practitioners", annotations=read_only)
    async def find_practitioners(
        request: Annotated[
            str,
            Field(
                min_length=1,
                max_length=settings.practitioners.max_query_chars,
                description="The patient's request in their own words, e.g. 'I need SVT ablation'.",
            ),
        ],
        location: Annotated[
            PractitionerLocation | None, Field(description="Only practitioners here (city/state/ZIP).")
        ] = None,
        limit: Annotated[
            int | None, Field(ge=1, le=100, description="How many practitioners to return.")
        ] = None,
    ) -> dict[str, Any]:
        """Match a patient's plain-language request (a procedure, diagnosis or symptoms) to clinicians in the
        practitioner directory. Returns ranked practitioners with specialty, organisation and address, and
        the reasons for each place (matched intent terms, boosts, penalties), plus how the request was
        understood (intent terms, anchor phrases, clinical intent)."""

        async def work() -> dict[str, Any]:
            from deepcite.practitioners.api import PractitionerQuery
            from deepcite.practitioners.finder import search_practitioners

            query = PractitionerQuery(
                userQuery=request,
                location=location.model_dump(exclude_none=True) if location else None,
                limit=limit,
            )
            finder = await asyncio.to_thread(shared.finder)
            response = await search_practitioners(query, finder)
            return response.model_dump(mode="json")

        return await _tool_call(work)

    return server


def run(*, http: bool = False, port: int | None = None, settings: Settings | None = None) -> None:
    """Serve over stdio, or over streamable HTTP on ``settings.mcp.host`` (127.0.0.1) and ``port``."""
    settings = settings or get_settings()
    server = build_server(settings)
    if not http:
        server.run("stdio")
        return
    server.run(
        "streamable-http",
        host=settings.mcp.host,
        port=port or settings.mcp.port,
        streamable_http_path=settings.mcp.path,
    )
