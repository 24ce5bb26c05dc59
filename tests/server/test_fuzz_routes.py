"""Property-based fuzzing of every HTTP route against the real server (hypothesis, a bounded number of
examples per route, derandomized so ``make test`` is repeatable): whatever is sent, the answer is never a
5xx, never a hang (a client timeout fails the case), and never holds a stack trace or a server path.

``benchmarks/hardening.py`` runs the same categories with more (random) examples and counts them."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings

from server.conftest import ADMIN, LiveServer, headers
from server.fuzz_cases import CATEGORIES, Case, problems, sendable

pytestmark = pytest.mark.slow

TIMEOUT_S = 60  # a case that takes longer is a hang


@pytest.fixture(scope="module")
def api(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=TIMEOUT_S) as c:
        yield c


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_no_input_gets_a_5xx_a_trace_or_a_path(api: httpx.Client, category: str) -> None:
    strategy, examples = CATEGORIES[category]

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy())
    def probe(case: Case) -> None:
        assume(sendable(case))
        response = case.send(api)
        assert not problems(response), (case, response.status_code, response.text[:500])

    probe()
