"""Settings of ingestion: chunking, reading files, and ingestion on a Ray cluster."""

from __future__ import annotations

from pydantic import Field

from deepcite.config.section import Section


class ChunkerSettings(Section):
    """How documents are cut into chunks."""

    max_tokens: int = 256
    overlap_tokens: int = 32


class IngestSettings(Section):
    """Reading files: limits per file, the reading sandbox, OCR, PDF clean-up, and the reader per type."""

    max_file_mb: float = 200.0  # a bigger file is skipped as too_large
    # a file whose text is longer is skipped as too_large: embedding 5M characters (~5,000 passages) takes
    # minutes on 2 cores, and an upload's job holds the queue meanwhile
    max_text_chars: int = Field(default=5_000_000, ge=1)
    # an ingest needs this many times its files' size free on the data dir (their stored originals, text,
    # vectors and graph), beyond store.min_free_mb: else "not enough space" before anything is written
    space_factor: float = Field(default=3.0, ge=0)
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
    # running headers/footers (:func:`deepcite.ingest.readers.pdf_text.drop_running_lines`): a line in this
    # top/bottom share of the page height whose every word (digits ignored) is in that band on at least this
    # share of pages, a line among a page's first or last ``running_edge_lines`` lines whose words repeat there
    # on that share of pages (a footer set above the band: a word processor's 1-inch margin), and lone page
    # numbers in the band, are dropped
    margin_share: float = 0.08
    repeated_line_share: float = 0.4
    running_edge_lines: int = Field(2, ge=0)
    # two PDF text segments of a line that meet between letters or digits are two words when the gap between
    # them is wider than the line's letter spacing (:func:`deepcite.ingest.readers.pdf_layout.letter_spacing`)
    # by more than this share of their font size: a letter-spaced heading set a letter at a time ("Backgrou
    # nd") and a spaced appendix ("docu me nts") read whole. Over the PDFs of real_docs and eval/blind4-14, a
    # gap between two letters of a word less its line's spacing is under 0.11 of the font size for 99.9% of
    # them, one between two words over 0.12 for 99%; 0.11 split words ("fail ure"), 0.13 joined them ("ofthe")
    # (docs/benchmarks/documents.md)
    pdf_word_gap: float = 0.12
    # a line's segments of one letter each tell its letter spacing when they leave at least this many gaps
    # between them ("B" "a" "c" … "d", a heading set a letter at a time; "x" "y" are two words)
    pdf_spaced_letters: int = Field(3, ge=1)
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
    # PDF figures: a form XObject (an embedded chart or diagram) covering at most this share of the page, at
    # least this many points on each side, drawing at least this many paths or images and some text of its
    # own; its text (axis labels, legends, a diagram's boxes) is read apart as one block of kind figure
    figure_max_page_share: float = 0.5
    figure_min_side: float = 36.0
    figure_min_graphics: int = 8
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
    # a web page's date line and byline ("Published 21 November 2019 · Tagged with …", "Posted by …") open its
    # text, and its footer's licence line ("Licensed under the CC BY 4.0 License") closes it, when
    # at most this long (a longer element is a section, not a line); 0: left out
    html_front_matter_chars: int = Field(200, ge=0)
    # a web page's content blocks that trafilatura's main content leaves out (a landing page's cards, a
    # schedule's day headings) are put back in their place (:mod:`deepcite.ingest.readers.html_recall`); off:
    # trafilatura's main content alone. A block with more than html_recall_link_share of its characters in
    # links is navigation, and so is every block of a group that has (boilerpipe's link density, 0.33); a
    # block of html_recall_words words or more is content, a shorter one (a label, a value, a date) only in the
    # card of a heading before it. Chosen on the dev sets' HTML pages (blind4-14, real_docs): the course and
    # schedule pages' cards come back, the news pages' menus, link lists and sharing bars stay out
    # (docs/benchmarks/documents.md)
    html_recall: bool = True
    html_recall_link_share: float = Field(0.33, ge=0.0, le=1.0)
    html_recall_words: int = Field(10, ge=1)
    # file type -> "module:attribute" of a Reader to use instead of the built-in one
    readers: dict[str, str] = Field(default_factory=dict)


class RaySettings(Section):
    """Ingestion on a Ray cluster (``deepcite ingest --ray``, the ``ray`` extra): files read, chunked and
    embedded by a pool of Ray actors, the store written by the ingesting process."""

    workers: int | None = Field(default=None, ge=1)  # actors; None: the cluster's CPUs / cpus_per_worker
    # CPUs each actor reserves; Ray gives its torch as many threads (OMP_NUM_THREADS)
    cpus_per_worker: int = Field(default=1, ge=1)
    local_cpus: int | None = Field(default=None, ge=1)  # CPUs of a Ray started here; None: all of them
    batches_in_flight: int = Field(default=2, ge=1)  # batches queued per actor, so none waits for work
    max_restarts: int = Field(default=1, ge=0)  # times a dead actor is started again (its model reloaded)
    max_task_retries: int = Field(default=1, ge=0)  # times a batch lost with its actor is sent again
