"""Documents in through the server: upload files to a collection, follow the ingest job, delete a document.

- ``POST /api/collections/{collection}/documents``: multipart, one or more file parts (any field name;
  the UI sends ``files``) and an optional ``on_error`` field (``skip``, the default, or ``fail``). The
  files are checked against ``server.max_upload_files`` and ``server.max_upload_file_bytes`` (the whole
  body against ``server.max_upload_request_bytes``), written to a folder under ``<data dir>/uploads`` (after
  a check that they fit: else ``507`` "not enough space") and ingested by a background job; the answer is ``202`` with the job. The documents' ACL groups are the caller's token's
  groups (an unrestricted caller makes public documents). A name that is already a document of the
  collection owned by other groups is refused with ``409`` (:meth:`~deepcite.app.corpus.Corpus.check_owner`),
  so an upload never replaces another group's document, nor says whether its content is the same.
- ``GET /api/jobs/{job_id}``: the job, each file's outcome so far and, once done, the ingest report.
- ``GET /api/jobs/{job_id}/events``: the job's progress as Server-Sent Events (``state``, ``file``,
  ``done``), from its first event.
- ``DELETE /api/collections/{collection}/documents/{document_id}``: a document's chunks and original.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sse_starlette import EventSourceResponse
from starlette.datastructures import FormData, UploadFile

from deepcite.config import Settings
from deepcite.errors import InputError
from deepcite.ingest.jobs import IngestJob
from deepcite.ingest.report import FileProgressCallback, IngestReport
from deepcite.retrieval.integrity import os_failure, require_space
from deepcite.retrieval.shared_dir import pid_alive
from deepcite.server.limits import RequestTooLarge, StreamedLimit
from deepcite.server.resources import CallerDep, EngineDep
from deepcite.server.routes_files import check_document_id, safe_filename

router = APIRouter(prefix="/api", tags=["documents"])

CollectionParam = Annotated[str, PathParam(description="The collection (created by the first upload).")]


class DeleteResponse(BaseModel):
    """``DELETE /api/collections/{collection}/documents/{document_id}``."""

    success: bool = True
    collection: str
    document_id: str
    chunks_deleted: int


def upload_limit(settings: Settings) -> StreamedLimit:
    """The body limit of the upload route, for :class:`~deepcite.server.limits.BodySizeLimit`."""
    return StreamedLimit(
        "POST",
        r"/api/collections/[^/]+/documents",
        settings.server.max_upload_request_bytes,
        "server.max_upload_request_bytes",
    )


def upload_name(filename: str | None, index: int) -> str:
    """A safe file name for an uploaded part: its last path part, control characters and separators
    replaced, no leading dots (a hidden file would be skipped), NFC; ``upload-<n>`` when nothing is left."""
    name = safe_filename(unicodedata.normalize("NFC", filename or "")).lstrip(".")
    return name or f"upload-{index + 1}"


async def _read_form(request: Request, settings: Settings) -> FormData:
    """The multipart form (file parts spooled to disk by Starlette); 400 for any other body."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise InputError(
            "send the files as multipart/form-data (e.g. curl -F files=@paper.pdf …), one part per file"
        )
    return await request.form(max_files=settings.server.max_upload_files + 1, max_fields=10)


def _file_parts(form: FormData, settings: Settings) -> list[UploadFile]:
    """The form's file parts, checked against the count and per-file size limits."""
    server = settings.server
    parts = [value for _, value in form.multi_items() if isinstance(value, UploadFile)]
    if not parts:
        raise InputError("the request holds no file; add one part per file (field name 'files')")
    if len(parts) > server.max_upload_files:
        raise RequestTooLarge(
            f"{len(parts)} files in one request; the limit is {server.max_upload_files} "
            "(setting server.max_upload_files): upload them in several requests"
        )
    for index, part in enumerate(parts):
        if part.size is not None and part.size > server.max_upload_file_bytes:
            raise RequestTooLarge(
                f"file {upload_name(part.filename, index)!r} is {part.size} bytes; the limit is "
                f"{server.max_upload_file_bytes} (setting server.max_upload_file_bytes)"
            )
    return parts


def _on_error(value: object) -> Literal["skip", "fail"]:
    if value in (None, "", "skip"):
        return "skip"
    if value == "fail":
        return "fail"
    raise InputError("on_error must be 'skip' (ingest the good files, report the rest) or 'fail'")


UPLOADS_DIR = "uploads"  # <data dir>/uploads/<pid>-<random>: an upload's files until its job ends


def upload_folder(settings: Settings) -> tempfile.TemporaryDirectory[str]:
    """A new folder for one upload's files under ``<data dir>/uploads``, named after this process so a
    server started later removes it if this one dies first (:func:`remove_abandoned_uploads`)."""
    root = settings.data_dir / UPLOADS_DIR
    root.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix=f"{os.getpid()}-", dir=root)


def remove_abandoned_uploads(settings: Settings) -> int:
    """Remove the upload folders of servers that have exited (killed before their jobs ended); returns how
    many. A live process's folders are left alone."""
    removed = 0
    for folder in (settings.data_dir / UPLOADS_DIR).glob("*-*"):
        pid = folder.name.split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _save(parts: list[UploadFile], names: list[str], folder: Path, min_free_mb: float) -> list[Path]:
    """Copy each part to ``folder/<n>/<name>`` (one folder per file keeps names apart); returns the paths.
    NoSpaceError, before anything is copied, when the parts do not fit (or when the disk fills meanwhile)."""
    sizes = [part.size or 0 for part in parts]
    require_space(folder, sum(sizes), min_free_mb)
    paths = []
    for index, (part, name) in enumerate(zip(parts, names, strict=True)):
        target = folder / str(index) / name
        target.parent.mkdir()
        part.file.seek(0)
        try:
            with target.open("wb") as out:
                shutil.copyfileobj(part.file, out)
        except OSError as exc:
            raise os_failure(exc, folder.parent.parent) or exc from None
        paths.append(target)
    return paths


@router.post(
    "/collections/{collection}/documents",
    status_code=202,
    response_model=IngestJob,
    responses={
        202: {"description": "The upload is saved and queued; follow the job."},
        400: {"description": "No files, duplicate names, a bad collection name or on_error value."},
        409: {"description": "A file's name is a document of the collection that other groups own."},
        413: {"description": "Too many files, a file too large, or the request body too large."},
    },
)
async def upload_documents(
    request: Request, engine: EngineDep, caller: CallerDep, collection: CollectionParam
) -> JSONResponse:
    """Upload files (multipart) into a collection and ingest them in the background; returns the job."""
    settings = engine.settings
    engine.corpus.check_target(collection)

    form = await _read_form(request, settings)
    try:
        parts = _file_parts(form, settings)
        on_error = _on_error(form.get("on_error"))
        names = [upload_name(part.filename, i) for i, part in enumerate(parts)]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise InputError(f"two files are named {doubled[0]!r}; rename one or upload them separately")
        await asyncio.to_thread(engine.corpus.check_owner, collection, names, caller.groups)  # 409
        folder = upload_folder(settings)  # removed when the job ends
        try:
            paths = await asyncio.to_thread(
                _save, parts, names, Path(folder.name), settings.store.min_free_mb
            )
        except BaseException:
            folder.cleanup()
            raise
    finally:
        await form.close()
    acl = list(caller.groups or ())

    def run(on_progress: FileProgressCallback) -> IngestReport:
        """In the job's thread: the first upload loads the embedder here, not in the request. The names'
        owners are checked again: another group's upload queued before this one may have made them."""
        engine.corpus.check_owner(collection, names, caller.groups)
        return engine.corpus.ingest_files(
            collection, paths, names=names, acl=acl, on_error=on_error, on_progress=on_progress
        )

    job = engine.resources.jobs.submit(
        collection,
        run,
        files=names,
        owner=caller.groups,
        cleanup=folder.cleanup,
    )
    return JSONResponse(
        job.model_dump(mode="json"), status_code=202, headers={"Location": f"/api/jobs/{job.job_id}"}
    )


@router.get("/jobs/{job_id}", response_model=IngestJob)
async def job_status(engine: EngineDep, caller: CallerDep, job_id: str) -> IngestJob:
    """An upload job: its state, each file's outcome so far and, once done, the ingest report."""
    return engine.resources.jobs.get(job_id, caller.groups)


@router.get(
    "/jobs/{job_id}/events",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "state, file and done events"}},
)
async def job_events(engine: EngineDep, caller: CallerDep, job_id: str) -> EventSourceResponse:
    """The job's progress as Server-Sent Events: ``state`` (queued, running), ``file`` as each file is being
    read, is read and is done (``{done, total, name, stage, file, passages}``), then ``done`` with the whole
    job. Replays from the first event."""
    jobs = engine.resources.jobs
    jobs.get(job_id, caller.groups)  # unknown or foreign job: a 404 before the stream starts

    async def frames() -> AsyncIterator[dict[str, str]]:
        async for name, data in jobs.events(job_id, caller.groups):
            yield {"event": name, "data": json.dumps(data)}

    return EventSourceResponse(frames())


@router.delete("/collections/{collection}/documents/{document_id:path}", response_model=DeleteResponse)
async def delete_document(
    engine: EngineDep, caller: CallerDep, collection: CollectionParam, document_id: str
) -> DeleteResponse:
    """Delete a document's chunks and its original file. A restricted caller may delete only documents
    shared with one of its groups (public documents only by an unrestricted caller)."""
    check_document_id(document_id, engine.settings.server.max_document_id_chars)
    engine.corpus.check_target(collection)

    deleted = await asyncio.to_thread(engine.corpus.remove, collection, document_id, caller.groups)
    return DeleteResponse(collection=collection, document_id=document_id, chunks_deleted=deleted)
