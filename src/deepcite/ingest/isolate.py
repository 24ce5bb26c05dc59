"""Read a file in a child process with a time limit and an address-space limit (RLIMIT_AS).

A hostile file (a PDF bomb, a page that renders to gigabytes, a parser stuck in a loop) then fails that
file, with a message, and never takes the ingesting process down. The child comes from a fork server
that has imported the readers and their parsers once, so starting one costs milliseconds, not an interpreter
start or a parser's import.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import resource
import signal
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.readers import READERS, ReadResult, SkipReason, out_of_memory, read_file

_BYTES_PER_MB = 1024 * 1024
_CONTEXT = multiprocessing.get_context("forkserver")
# the built-in readers' modules (and their parsers) are imported once in the fork server, not in every child:
# 1.5 s of the 9.3 s it took to read the 19 real documents (README, "Embedding precision"); so is their
# one-time set-up (readers.warm: 1.2 s for every web page whose date reaches dateparser)
_CONTEXT.set_forkserver_preload(
    [
        "deepcite.ingest.forkserver_guard",  # first: the fork server exits when the process that started it dies
        "deepcite.ingest.readers",
        *sorted({spec.partition(":")[0] for spec in READERS.values()}),
        "deepcite.ingest.readers.warm",
        "deepcite.ingest.report",  # and the chunker a reading may be followed by (read_file_report)
    ]
)
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent exits (Linux ``PR_SET_PDEATHSIG``; elsewhere
    nothing), and exit now if the parent is already gone: a reader never runs on after the ingest."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        return
    if os.getppid() != parent or parent == 1:  # the parent died before the request took effect
        os._exit(1)


def read_file_isolated(
    path: Path,
    *,
    doc_id: str,
    name: str,
    settings: IngestSettings,
    then: Callable[[ReadResult], None] | None = None,
) -> ReadResult:
    """:func:`deepcite.ingest.readers.read_file` in a child process (when ``settings.isolate``), bounded by
    ``settings.timeout_s`` and ``settings.memory_limit_mb``. ``then`` (picklable) is done to what was read, in
    the same child, within the same bounds: work on the documents that should not take the ingesting
    process's time (chunking). Should it fail, the result comes back as read, and the caller does that work."""
    if not settings.isolate:
        result = read_file(path, doc_id=doc_id, name=name, settings=settings)
        _then(then, result)
        return result
    receiver, sender = _CONTEXT.Pipe(duplex=False)
    child = _CONTEXT.Process(
        target=_child, args=(sender, path, doc_id, name, settings, then), name="deepcite-read", daemon=True
    )
    with _main_module_hidden():
        child.start()
    sender.close()
    try:
        if receiver.poll(settings.timeout_s):
            try:
                return receiver.recv()
            except EOFError:
                pass  # the child died before it could answer
        else:
            return ReadResult.skipped(
                SkipReason.TIMEOUT,
                f"reading took longer than {settings.timeout_s:g} s (setting ingest.timeout_s); "
                "the file may be hostile or damaged",
            )
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join()
    return ReadResult.skipped(
        SkipReason.OUT_OF_MEMORY if child.exitcode in (-9, 1) else SkipReason.CORRUPT,
        f"the reader stopped (exit code {child.exitcode}) within the {settings.memory_limit_mb} MB memory "
        "limit (setting ingest.memory_limit_mb); the file may be hostile or damaged",
    )


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Start the child without re-importing the caller's ``__main__``: the child runs only this module's
    ``_child``, and a user's script without an ``if __name__ == "__main__":`` guard must not run again."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _then(then: Callable[[ReadResult], None] | None, result: ReadResult) -> None:
    if then is None or result.skip:
        return
    try:
        then(result)
    except Exception:  # the caller does the work again in its own process, and reports what fails there
        return


def _child(
    sender: Connection,
    path: Path,
    doc_id: str,
    name: str,
    settings: IngestSettings,
    then: Callable[[ReadResult], None] | None,
) -> None:
    die_with_parent()  # the fork server; it dies with the ingesting process
    limit = settings.memory_limit_mb * _BYTES_PER_MB
    try:
        if _address_space("VmSize") >= limit:  # the readers the fork server imported already take more
            sender.send(out_of_memory(settings))
            return
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        result = read_file(path, doc_id=doc_id, name=name, settings=settings)
        if (
            result.skip
            and result.skip.reason is SkipReason.CORRUPT
            and _address_space("VmPeak") >= (settings.memory_exhausted_share * limit)
        ):
            result = out_of_memory(settings)
        _then(then, result)
        sender.send(result)
    finally:
        sender.close()


def _address_space(field: str) -> int:
    """This process's virtual memory in bytes, now (``VmSize``) or at its peak (``VmPeak``); 0 where /proc
    does not tell."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024  # kB
    return 0
