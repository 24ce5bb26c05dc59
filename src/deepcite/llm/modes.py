"""The structured-output style each server accepted, remembered across processes in the data dir.

A server that refuses OpenAI's ``json_schema`` response format (llama-cpp-python answers it with a 500) steps
the client down to ``json_object`` with the schema, then to a prompt instruction
(:mod:`deepcite.llm.openai_client`). The style that worked is written to
``<data_dir>/llm/structured_output.json``, keyed by base URL and model, so the next process starts there instead
of spending a refused request again. The file is replaced atomically (a temporary file in the same folder,
then ``os.replace``): a reader sees the old file or the new one, never half of one. A file that cannot be read
or written is logged and ignored: the client still probes as if it were new.

Usage::

    memory = StructuredOutputMemory(settings.data_dir / "llm" / "structured_output.json")
    memory.get("http://127.0.0.1:8080/v1", "SmolLM2")        # None, or "json_object"
    memory.remember("http://127.0.0.1:8080/v1", "SmolLM2", "json_object")
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Literal, cast

log = logging.getLogger(__name__)

StructuredOutput = Literal["json_schema", "json_object", "prompt"]
LEVELS: tuple[StructuredOutput, ...] = ("json_schema", "json_object", "prompt")


def _key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')} {model}"


class StructuredOutputMemory:
    """The remembered style of each (base URL, model), in one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def get(self, base_url: str, model: str) -> StructuredOutput | None:
        """The style remembered for this server and model, or None."""
        level = self._read().get(_key(base_url, model))
        return cast(StructuredOutput, level) if level in LEVELS else None

    def remember(self, base_url: str, model: str, level: StructuredOutput) -> None:
        """Record ``level`` for this server and model (atomic replace of the file)."""
        with self._lock:
            data = self._read()
            key = _key(base_url, model)
            if data.get(key) == level:
                return
            data[key] = level
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".structured_output.", suffix=".tmp")
                try:
                    with os.fdopen(fd, "w", encoding="utf-8") as out:
                        json.dump(data, out, indent=1, sort_keys=True)
                    os.replace(tmp, self.path)
                except BaseException:
                    Path(tmp).unlink(missing_ok=True)
                    raise
            except OSError as exc:
                log.warning("could not remember the LLM's structured-output style in %s: %s", self.path, exc)

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring %s (%s); the LLM's structured-output style is probed again", self.path, exc)
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
