"""One data dir, several processes: who holds a collection, which server runs, and failures of Qdrant's engine
named.

Qdrant's Edge engine locks a shard for the process that opened it (its WAL is locked), so a second process
cannot open the same collection; but it takes that lock only after it has opened the shard's segments, and
opening them replays and truncates their journals: a load that then fails on the lock has already broken
the holder's next flush ("Tracker journal … is shorter than expected"). This module makes that state
visible and safe:

- a **shard lock** (``<collection>/shard.lock``, an exclusive ``flock``) is taken before Qdrant's engine
  opens a shard and held until it is closed, so a second process (or a second store in one process) is
  refused before it reads a file of the shard (:func:`lock_shard`);

- a **holder file** (``<collection>/holder.json``: pid, command, when) is written atomically when a process
  opens a collection's shard and removed when it closes it; a process that fails to open a shard reads it
  to name the holder. A holder whose process is gone (or whose pid was reused) is ignored.
- a **server file** (``<data_dir>/server.json``: pid, command, url) is written by ``deepcite serve``, so a
  CLI command on a collection the server holds can go through the server's HTTP API instead.
- :func:`qdrant_failure` turns Qdrant's plain exceptions into :class:`CollectionBusyError` (another
  process holds the shard), :class:`CollectionDamagedError` (its files cannot be read) or
  :class:`InputError` (Qdrant's engine refused the request), with no server path in the message.
- :func:`create_atomically` builds a new collection folder beside its final place and renames it there,
  so a creation is all-or-nothing and never deletes another process's work.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from deepcite.errors import CollectionBusyError, CollectionDamagedError, DeepciteError, InputError
from deepcite.retrieval.integrity import no_space

HOLDER_FILE = "holder.json"
LOCK_FILE = "shard.lock"
SERVER_FILE = "server.json"
_CREATING = ".creating-"  # prefix of a collection folder being built: .creating-<name>.<pid>.<random>
_DROPPING = ".dropping-"  # prefix of a collection folder being removed
# Qdrant's words for a request it refused (not a damaged file)
_REFUSED = ("Wrong input", "Bad input", "Bad request")
_PATH = re.compile(r"(?:[\w.\-]*/)+[\w.\-]*")


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` via a temporary file in the same folder and ``os.replace``: a
    reader sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(prefix=".deepcite-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def lock_shard(path: Path) -> int | None:
    """Take the exclusive lock at ``path`` (created if missing) for as long as the returned descriptor is open;
    ``None`` when the folder is read-only (nothing can write the shard then). Raises ``BlockingIOError`` when
    another process, or another open of the same file, holds it. The lock dies with the process."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        raise
    return fd


def unlock_shard(fd: int | None) -> None:
    """Release a lock :func:`lock_shard` took."""
    if fd is not None:
        os.close(fd)


def _process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), which tells a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _command() -> str:
    """What this process is, as a user would type it: ``deepcite serve``, ``deepcite ingest``, or ``python``."""
    argv = sys.argv or [""]
    prog = Path(argv[0]).name
    words = [a for a in argv[1:] if not a.startswith("-")][:1]
    if prog in ("deepcite", "__main__.py") or "deepcite" in prog:
        return " ".join(["deepcite", *words])
    return "python" if prog in ("", "-c") else f"python {prog}"


@dataclass(frozen=True)
class Holder:
    """A process that holds a collection (or runs the server): pid, command, since when, its URL if a server."""

    pid: int
    command: str
    started: str
    proc_start: int | None = None
    url: str | None = None

    @classmethod
    def this_process(cls, url: str | None = None) -> Holder:
        pid = os.getpid()
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        return cls(pid=pid, command=_command(), started=started, proc_start=_process_start(pid), url=url)

    @property
    def alive(self) -> bool:
        """Whether the process still runs (and is the same process, not a reused pid)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # another user's live process
        now = _process_start(self.pid)
        return self.proc_start is None or now is None or now == self.proc_start

    def describe(self) -> str:
        """``deepcite serve`` (pid 1234, since 2026-11-24T00:30:00+0000)."""
        return f"`{self.command}` (pid {self.pid}, since {self.started})"


def read_holder(path: Path) -> Holder | None:
    """The live holder recorded at ``path``; None when there is none, it cannot be read, or it has exited."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        holder = Holder(**{k: data.get(k) for k in ("pid", "command", "started", "proc_start", "url")})
    except (OSError, ValueError, TypeError):
        return None
    return holder if isinstance(holder.pid, int) and holder.alive else None


def claim(path: Path, url: str | None = None) -> None:
    """Record this process as the holder at ``path`` (best effort: a read-only folder only loses the name)."""
    with contextlib.suppress(OSError):
        write_json_atomically(path, asdict(Holder.this_process(url)))


def release(path: Path) -> None:
    """Remove the holder record at ``path`` if this process wrote it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def running_server(data_dir: Path) -> Holder | None:
    """The live ``deepcite serve`` of this data dir (with its URL), if one announced itself."""
    return read_holder(data_dir / SERVER_FILE)


@contextlib.contextmanager
def announced_server(data_dir: Path, host: str, port: int) -> Iterator[None]:
    """While ``deepcite serve`` runs: its pid, command and local URL in ``<data_dir>/server.json``."""
    local = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    url = f"http://[{local}]:{port}" if ":" in local else f"http://{local}:{port}"
    path = data_dir / SERVER_FILE
    with contextlib.suppress(OSError):
        data_dir.mkdir(parents=True, exist_ok=True)
    claim(path, url)
    try:
        yield
    finally:
        release(path)


def server_holding(data_dir: Path, collection_folder: Path) -> str | None:
    """The URL of the live server of ``data_dir`` when it is the process holding this collection."""
    server = running_server(data_dir)
    holder = read_holder(collection_folder / HOLDER_FILE)
    if server is None or holder is None or holder.pid != server.pid:
        return None
    return server.url


def busy_error(name: str, folder: Path, data_dir: Path) -> CollectionBusyError:
    """The error for a collection whose shard another process holds, naming that process."""
    holder = read_holder(folder / HOLDER_FILE)
    server = running_server(data_dir)
    if holder is not None and holder.pid == os.getpid():
        return CollectionBusyError(
            f"collection {name!r} is already open in this process (another store on the same data dir); "
            "use one store per data dir"
        )
    if holder is None:
        return CollectionBusyError(
            f"collection {name!r} is open in another process; wait for it to finish (a CLI ingest) or stop "
            "it (`deepcite serve`), then try again"
        )
    if server is not None and server.pid == holder.pid and server.url:
        todo = (
            f"stop it, or go through it: `deepcite ingest` and `deepcite search` with --server {server.url}, "
            "or its HTTP API"
        )
    else:
        todo = "wait for it to finish or stop it, then try again"
    return CollectionBusyError(f"collection {name!r} is open in {holder.describe()}; {todo}")


def _short(message: str, root: Path) -> str:
    """Qdrant's message without the data dir's paths (a path keeps its last two parts)."""
    for prefix in {str(root.resolve()), str(root)}:
        message = message.replace(prefix + os.sep, "")
    message = _PATH.sub(lambda m: "/".join(m.group(0).rstrip("/").split("/")[-2:]), message)
    message = message.removeprefix("Service runtime error: ")
    return message if len(message) <= 240 else message[:239] + "…"


def qdrant_failure(name: str, exc: BaseException, root: Path, data_dir: Path) -> DeepciteError | None:
    """What an exception of Qdrant's engine on collection ``name`` (under ``root``) means, or None when it is
    not Qdrant's own (a bug or a type error, left to propagate)."""
    if isinstance(exc, DeepciteError):
        return exc
    if type(exc) is not Exception:  # the binding raises plain Exception; anything else is ours
        return None
    text = str(exc)
    if "WouldBlock" in text:
        return busy_error(name, root / name, data_dir)
    if "No space left on device" in text or "os error 28" in text:
        return no_space(data_dir, 0)
    if text.startswith(_REFUSED):
        return InputError(
            f"the search engine refused the request on collection {name!r}: {_short(text, root)}"
        )
    return CollectionDamagedError(name, _short(text, root))


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (another user's process counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _abandoned(folder: Path) -> bool:
    """Whether a ``.creating-<name>.<pid>.<random>`` folder's creator has exited."""
    try:
        pid = int(folder.name.rsplit(".", 2)[-2])
    except (ValueError, IndexError):
        return True
    return not pid_alive(pid)


def create_atomically(root: Path, name: str, build: Callable[[Path], None]) -> bool:
    """Build collection ``name`` in a temporary folder beside ``root/name`` and rename it into place.

    ``build(folder)`` writes the whole collection (closing what it opened). Returns True when this call
    made the collection, False when another process made it first (its folder is kept; ours is removed).
    Folders left by creators that have exited are removed; a live creator's folder is never touched.
    """
    for left in root.glob(f"{_CREATING}{name}.*"):
        if _abandoned(left):
            shutil.rmtree(left, ignore_errors=True)
    final = root / name
    tmp = Path(tempfile.mkdtemp(prefix=f"{_CREATING}{name}.{os.getpid()}.", dir=root))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; a collection folder gets the usual mode
    try:
        build(tmp)
        try:
            os.rename(tmp, final)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            return False
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def remove_folder(folder: Path) -> None:
    """Remove a collection folder: renamed aside first (so it vanishes at once), then deleted."""
    aside = folder.with_name(f"{_DROPPING}{folder.name}.{os.getpid()}.{time.monotonic_ns()}")
    os.rename(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)
