"""A setting's value as a benchmark's command line writes it (``--set key=value``, ``--grid key=a,b``)."""

from __future__ import annotations


def setting_value(text: str) -> int | float | bool | str:
    """``text`` as an int, a float, ``true``/``false`` as a bool, or the text itself."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)
