"""The built-in readers' one-time set-up, done on import: the reader's fork server (:mod:`deepcite.ingest.isolate`)
imports this module, so its children start with it done instead of each repeating it.

htmldate (trafilatura's date finder) hands a date string it cannot read itself to dateparser, which compiles its
patterns for each of its some 200 languages on first use: 1.2 s of CPU, and about 45 MB, in every child that
reads such a page (the real documents' 10-K: 2.1 s to read in a child before, 0.85 s after). A string that no
language reads makes dateparser compile them all.
"""

from __future__ import annotations

import logging

from htmldate.extractors import get_external_parser

log = logging.getLogger(__name__)

_NO_LANGUAGE_READS = "2021 deepcite 03"


def warm_date_parser() -> None:
    """Compile dateparser's patterns for every language, as htmldate's parser would on first use."""
    try:
        get_external_parser().get_date_data(_NO_LANGUAGE_READS)
    except Exception as exc:  # a reader then pays the set-up itself; reading still works
        log.warning("could not set up the date parser ahead of reading (%s)", exc)


warm_date_parser()
