"""Settings of what deepcite talks to and serves through: the LLM endpoint, web search, the HTTP API, the MCP
server and saved answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from deepcite.config.section import Section


class LLMSpeedSettings(Section):
    """Slow-model detection (llm/speed.py): the model's speed is measured from its replies (prompt tokens read
    and reply tokens written per second, fitted over the last ``window`` replies, apart from
    ``min_fit_replies`` on); once ``min_replies`` are
    measured, a call whose predicted time (its prompt, and its reply at the stage's output cap) times ``margin``
    does not fit the time its stage has left is not sent: that part runs offline and ``written`` says why, and
    the answer's prompts show only the passages the time left can read. Until the replies tell reading from
    writing apart, reading is taken to be ``read_write_ratio`` times faster than writing."""

    enabled: bool = True
    window: int = Field(default=16, ge=1)
    min_replies: int = Field(default=1, ge=1)
    margin: float = Field(default=1.2, ge=1.0)
    read_write_ratio: float = Field(default=8.0, gt=0.0)
    min_fit_replies: int = Field(default=4, ge=2)  # replies before reading and writing are fitted apart
    max_age_s: float = Field(
        default=600.0, gt=0.0
    )  # older replies no longer count (the machine's load changes)
    # the server answers one call at a time (llama.cpp, llama-cpp-python, Ollama by default): a new call waits
    # for the predicted end of those in flight (for a fast remote server the predictions are small anyway)
    assume_serial: bool = True


class LLMStageSettings(Section):
    """Output caps per stage: the most tokens a reply of each stage may run to (never above
    ``llm.max_output_tokens``). A small model that does not stop runs to its cap; these keep each stage's reply
    within its share of the request's time."""

    plan_tokens: int = Field(default=256, ge=1)
    coverage_grade_tokens: int = Field(default=160, ge=1)
    next_subquestion_tokens: int = Field(default=96, ge=1)
    next_hop_tokens: int = Field(default=128, ge=1)
    hyde_tokens: int = Field(default=160, ge=1)
    summary_tokens: int = Field(default=192, ge=1)
    long_answer_tokens: int = Field(default=384, ge=1)
    subanswer_tokens: int = Field(default=160, ge=1)
    # an answer part the measured pace cannot write at its cap in the time left is shown one passage and capped
    # at what it can write, down to this many tokens; below, it runs offline (llm/speed.py)
    min_reply_tokens: int = Field(default=64, ge=1)
    # the coverage grader's prompt: at most this many passages, each cut to this many characters
    coverage_passages: int = Field(default=6, ge=1)
    coverage_passage_chars: int = Field(default=400, ge=50)

    def cap_for(self, part: str | None) -> int | None:
        """The output cap of the stage that writes ``part`` (the name ``written`` gives it), None for others."""
        if part is None:
            return None
        if part.startswith("sub-answer"):
            return self.subanswer_tokens
        field_name = _STAGE_FIELDS.get(part)
        return getattr(self, field_name) if field_name is not None else None


# the parts as ``written`` names them -> the field of their output cap
_STAGE_FIELDS = {
    "plan": "plan_tokens",
    "coverage grade": "coverage_grade_tokens",
    "next sub-question": "next_subquestion_tokens",
    "next hop": "next_hop_tokens",
    "HyDE passage": "hyde_tokens",
    "summary": "summary_tokens",
    "long answer": "long_answer_tokens",
}


class LLMSettings(Section):
    """Any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, Gemini)."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0  # each network step (connect, one read): the httpx timeout
    # one call's whole wall-clock time: connect, every read and every retry with its wait
    call_deadline_s: float = 120.0
    max_retries: int = 4
    # a refused or dropped connection is tried again at most this often; then the breaker opens: every call of
    # the same request, and of any request for `breaker_open_s` after, ends at once (llm/breaker.py)
    connect_retries: int = Field(default=1, ge=0)
    breaker_open_s: float = Field(default=30.0, ge=0.0)
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 20.0
    temperature: float = 0.0
    max_output_tokens: int = 1024
    # first structured-output style tried; a refusal (400, 422, or an error naming the type) steps down
    # json_schema > json_object (with the schema) > prompt
    structured_output: Literal["json_schema", "json_object", "prompt"] = "json_schema"
    # the style a server accepted is remembered per server and model in <data_dir>/llm/structured_output.json,
    # so the next process does not ask again in a style the server refuses (llm/modes.py)
    remember_structured_output: bool = True
    chars_per_token: float = 4.0  # token estimate for budgets (about 4 characters per token in English)
    # chat calls in flight at once, across every thread and event loop of the process (None: no cap); 1 for a
    # single-slot server (llama.cpp, llama-cpp-python). Waiting for a slot counts against the call's deadline.
    max_concurrent_calls: int | None = Field(default=None, ge=1)
    speed: LLMSpeedSettings = Field(default_factory=LLMSpeedSettings)
    stages: LLMStageSettings = Field(default_factory=LLMStageSettings)

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class WebSearchSettings(Section):
    """Web results per sub-question through an MCP server's web_search tool."""

    enabled: bool = False
    mcp_url: str | None = None
    tool_name: str = "web_search"
    allowed_domains: list[str] = Field(default_factory=list)
    max_results: int = 5
    concurrency: int = 4
    page_timeout_s: float = 10.0
    summary_sentences: int = 3
    query_argument: str = "query"  # the tool's argument that takes the search text
    tool_arguments: dict[str, Any] = Field(default_factory=dict)  # extra fixed arguments, e.g. {"count": 5}
    tool_timeout_s: float = 30.0  # one web_search tool call, connection included
    max_page_bytes: int = 2_000_000  # pages larger than this are cut before text extraction
    summary_max_chars: int = 1200  # a page's summary passage is cut to this length
    min_sentence_tokens: int = 4  # shorter page sentences (menus, captions) are not quoted
    llm_page_chars: int = 8000  # page text handed to the LLM summariser
    user_agent: str = "deepcite/0.1 (research assistant; evidence fetch)"


class ServerSettings(Section):
    """The HTTP API."""

    host: str = "127.0.0.1"
    port: int = 8000
    max_request_bytes: int = 64_000
    default_collection: str = "demo"
    # uploads (POST /api/collections/{collection}/documents): each file, the whole multipart body, the files
    max_upload_file_bytes: int = 50_000_000
    max_upload_request_bytes: int = 200_000_000
    max_upload_files: int = 50
    max_document_id_chars: int = 512  # a longer id in /files/{collection}/{document_id} is refused
    job_history: int = 100  # upload jobs kept for GET /api/jobs/{job_id} (oldest finished ones go first)
    # an upload's job may embed this long: past it the job fails saying so (the files done stay ingested) and
    # the next job runs, so one slow upload cannot hold the queue; checked every upload_embed_check_texts texts
    upload_embed_s: float = Field(default=600.0, gt=0)
    upload_embed_check_texts: int = Field(default=256, ge=1)
    disconnect_poll_s: float = 0.5  # how often a long JSON request checks that its client is still there
    # load the models, the store and the default collection before the server takes requests (Engine.warm), so
    # the first question is as quick as the next; off: each is built on first use
    warm_start: bool = True
    # ... and embeds the sentences of this many of the default collection's passages (found by one search, at
    # most search.max_k), which the model's first batches of passage-length text make slow otherwise
    warm_passages: int = Field(default=50, ge=0)
    # the CLI going through a running server (deepcite ingest/search --server, or found via server.json)
    client_timeout_s: float = Field(default=300.0, gt=0)  # one HTTP request to the server
    client_poll_s: float = Field(default=0.5, gt=0)  # how often an upload's ingest job is asked for


class MCPSettings(Section):
    """deepcite's own MCP server (``deepcite mcp``): where it listens and what its tools allow."""

    host: str = "127.0.0.1"  # streamable HTTP only binds here unless changed on purpose
    port: int = 8765
    path: str = "/mcp"
    max_passage_chars: int = 2000  # passage text in tool results is cut to this length
    # ACL groups every MCP caller may read, e.g. DEEPCITE_MCP_GROUPS='["cardiology"]'; unset: everything
    groups: list[str] | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "WARNING"


class SavedAnswerSettings(Section):
    """Saved answers (``<data dir>/answers.sqlite``, :mod:`deepcite.saved_answers`): every answer is kept
    until more than ``max_answers`` are saved (the oldest go first) or it is deleted."""

    path: Path | None = None  # None means <data_dir>/answers.sqlite
    max_answers: int = Field(default=500, ge=0)  # 0 saves nothing
    list_limit: int = Field(default=100, ge=1)  # most recent saved answers one listing returns
    busy_timeout_s: float = Field(default=30.0, gt=0)  # wait this long for another writer of the file
