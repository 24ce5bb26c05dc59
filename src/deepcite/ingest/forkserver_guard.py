"""The reading fork server's first preload (:mod:`deepcite.ingest.isolate`): imported there, it makes the fork
server exit soon after the process that started it dies (even by ``kill -9``), so no fork server is left behind
to fork readers for an ingest that is gone; each reader in turn dies with the fork server
(:func:`~deepcite.ingest.isolate.die_with_parent`). Imported anywhere else it does nothing.

A thread watches the parent's pid rather than ``PR_SET_PDEATHSIG``, which fires when the *thread* that started
the fork server ends: an ingest's read-ahead thread does, after every ingest.
"""

from __future__ import annotations

import os
import sys
import threading
import time

WATCH_S = 0.5  # how often the fork server looks whether the process that started it still runs


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_S)
    os._exit(0)


if sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules:
    if os.getppid() == 1:  # the process that started it died while it started: adopted by init
        os._exit(0)
    threading.Thread(target=_watch, args=(os.getppid(),), name="deepcite-parent-watch", daemon=True).start()
