"""``deepcite ingest`` and ``deepcite search`` through a running ``deepcite serve``, over its HTTP API.

A collection the server has open is locked to the server's process, so the CLI goes through the server
instead of fighting for the lock: with ``--server URL``, or on its own when the server of this data dir
(its ``server.json``) is the process holding the collection (see :mod:`deepcite.retrieval.shared_dir`).
Search is ``POST /api/search``; ingest uploads the files to ``POST /api/collections/{c}/documents`` and
follows the job at ``GET /api/jobs/{id}``. The bearer token is the first of ``api_keys`` when the
server requires one (the CLI and the server read the same settings).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from deepcite.config import Settings
from deepcite.errors import DeepciteError, InputError
from deepcite.ingest.formats import InputFormat, detect_format, document_files
from deepcite.ingest.report import IngestProgress, IngestReport
from deepcite.retrieval.points import validate_collection_name
from deepcite.retrieval.shared_dir import server_holding
from deepcite.service import SearchRequest, SearchResponse

# formats whose files the server's upload route reads the same way as a local ingest
_UPLOADABLE = (InputFormat.FILES, InputFormat.JSONL, InputFormat.TEXT)


class RemoteError(DeepciteError):
    """The server could not be reached, or refused the request (its own message is passed on)."""


def server_for(settings: Settings, collection: str, explicit: str | None) -> str | None:
    """The server to go through: ``explicit`` (``--server``), else the live ``deepcite serve`` of this data
    dir when it holds ``collection``; None to work on the data dir directly."""
    if explicit:
        return explicit.rstrip("/")
    if settings.store.backend != "edge":
        return None
    validate_collection_name(collection, settings.store.max_collection_name_chars)
    return server_holding(settings.data_dir, settings.edge_path / collection)


@contextlib.contextmanager
def _client(url: str, settings: Settings) -> Iterator[httpx.Client]:
    token = next((e.partition(":")[0].strip() for e in settings.api_keys.split(",") if e.strip()), None)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=settings.server.client_timeout_s) as client:
            yield client
    except httpx.TransportError as exc:
        raise RemoteError(
            f"cannot reach the server at {url} ({type(exc).__name__}); check that `deepcite serve` runs there"
        ) from None


def _checked(response: httpx.Response, url: str) -> httpx.Response:
    if response.is_success:
        return response
    try:
        message = response.json().get("message") or response.text
    except ValueError:
        message = response.text[:300]
    raise RemoteError(f"the server at {url} answered {response.status_code}: {message}")


def remote_search(url: str, request: SearchRequest, settings: Settings) -> SearchResponse:
    """The server's answer to ``request`` (its ACL groups already in ``request.filters``)."""
    with _client(url, settings) as client:
        response = client.post("/api/search", json=request.model_dump(mode="json", exclude_none=True))
        return SearchResponse.model_validate(_checked(response, url).json())


def remote_ingest(
    url: str,
    collection: str,
    path: Path,
    *,
    fmt: str,
    on_error: str,
    settings: Settings,
    on_file: Callable[[IngestProgress], None] | None = None,
) -> IngestReport:
    """Upload the files under ``path`` to the server in batches of ``server.max_upload_files`` and wait for
    each ingest job; returns one report for them all. Corpus formats the server cannot read from an
    upload (BEIR, PubMedQA, HotpotQA, MuSiQue folders) are refused with what to do instead."""
    from deepcite.ingest.jobs import IngestJob, JobState

    kind = InputFormat.from_str(fmt)
    kind = detect_format(path) if kind is InputFormat.AUTO else kind
    if kind not in _UPLOADABLE:
        raise InputError(
            f"a {kind.value} corpus cannot be ingested through the server at {url} (it takes files and JSON "
            "Lines); stop the server and run the ingest again, or convert the corpus to JSON Lines"
        )
    files = document_files(path)
    total = IngestReport(collection=collection)
    started = time.perf_counter()
    size = settings.server.max_upload_files
    with _client(url, settings) as client:
        for start in range(0, len(files), size):
            batch = files[start : start + size]
            with contextlib.ExitStack() as stack:
                parts = [("files", (f.name, stack.enter_context(f.open("rb")))) for f in batch]
                response = client.post(
                    f"/api/collections/{collection}/documents", files=parts, data={"on_error": on_error}
                )
            job = IngestJob.model_validate(_checked(response, url).json())
            seen = 0
            while True:
                for report in job.files[seen:]:
                    seen += 1
                    if on_file:
                        on_file(
                            IngestProgress(done=start + seen, total=len(files), name=report.file, file=report)
                        )
                if job.finished:
                    break
                time.sleep(settings.server.client_poll_s)
                job = IngestJob.model_validate(_checked(client.get(f"/api/jobs/{job.job_id}"), url).json())
            if job.state is JobState.FAILED or job.report is None:
                raise RemoteError(f"the server's ingest job {job.job_id} failed: {job.error}")
            _add(total, job.report)
    total.seconds = time.perf_counter() - started
    return total


def _add(total: IngestReport, part: IngestReport) -> None:
    total.files.extend(part.files)
    total.skipped.extend(part.skipped)
    for key in ("documents", "chunks", "written", "unchanged"):
        setattr(total, key, getattr(total, key) + getattr(part, key))
    for key in ("read_seconds", "embed_seconds", "index_seconds", "graph_seconds"):
        setattr(total, key, getattr(total, key) + getattr(part, key))
