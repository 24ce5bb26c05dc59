"""The reply body of an OpenAI-compatible chat completion, for the benchmarks' stand-in LLM servers
(oracle_reader.py: a perfect reader; recorded_openie.py: recorded GPT-3.5 output)."""

from __future__ import annotations


def completion(content: str, model: str, name: str) -> dict[str, object]:
    """A finished ``chat.completion`` whose one message is ``content``, from the stand-in called ``name``."""
    return {
        "id": name,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
