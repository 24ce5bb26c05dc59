"""Pieces of the API that need no index: API-key parsing, ACL narrowing, the SSE event sequence."""

from __future__ import annotations

import asyncio
import json

import pytest

from deepcite.errors import ConfigError, LLMError
from deepcite.models import CoverageReport, Filters, RoundReport
from deepcite.server.auth import Authenticator, UnauthorizedError, parse_api_keys
from deepcite.server.sse import ask_events
from deepcite.service import AskResponse, HopCallback, HopEvent, restrict_filters


def test_api_keys_parse_tokens_groups_and_wildcards() -> None:
    keys = parse_api_keys(" alpha , beta:cardiology|oncology ,gamma:* ,")
    assert keys == {"alpha": (), "beta": ("cardiology", "oncology"), "gamma": None}
    for bad in (":groups", "alpha,alpha:x"):
        with pytest.raises(ConfigError):
            parse_api_keys(bad)


def test_authenticator_maps_tokens_to_callers() -> None:
    auth = Authenticator("alpha,beta:cardiology")
    assert auth.caller("Bearer beta").groups == ("cardiology",)
    assert auth.caller("bearer alpha").groups == ()
    for header in (None, "", "Bearer", "Bearer nope", "Token alpha"):
        with pytest.raises(UnauthorizedError):
            auth.caller(header)
    assert Authenticator("").caller(None).groups is None  # auth off: unrestricted


def test_requested_groups_are_narrowed_never_widened() -> None:
    assert restrict_filters(None, None) is None
    assert restrict_filters(None, ("a", "b")).acl_groups == ["a", "b"]
    asked = Filters(acl_groups=["b", "c"], year_from=2010)
    narrowed = restrict_filters(asked, ("a", "b"))
    assert narrowed.acl_groups == ["b"] and narrowed.year_from == 2010
    assert asked.acl_groups == ["b", "c"]  # the caller's object is left alone
    assert restrict_filters(asked, ()).acl_groups == []  # public only


def hop(n: int) -> HopEvent:
    report = RoundReport(
        round=n, subquestion=f"q{n}", queries=[], candidates_before_fusion=0, candidates_after_fusion=0,
        candidates_after_rerank=0, selected=[], new_evidence=0, coverage_percentage=0.0, weighted_coverage=0.0,
        uncovered_aspects=[], decision="continue", reason="",
    )  # fmt: skip
    coverage = CoverageReport(
        threshold=0.5, total_aspects=0, coverage_percentage=0.0, weighted_coverage=0.0, uncovered_count=0
    )
    return HopEvent(**dict(report), evidence_total=0, coverage=coverage)


def collect(run) -> list[tuple[str, dict]]:  # type: ignore[no-untyped-def]
    async def go() -> list[tuple[str, dict]]:
        return [(event.event, json.loads(event.data)) async for event in ask_events(run)]

    return asyncio.run(go())


def test_a_failure_after_the_hops_becomes_an_error_event() -> None:
    async def run(on_hop: HopCallback) -> AskResponse:
        on_hop(hop(1))
        on_hop(hop(2))
        await asyncio.sleep(0)
        raise LLMError("the LLM endpoint failed after 4 retries")

    events = collect(run)
    assert [name for name, _ in events] == ["hop", "hop", "error"]
    assert events[-1][1] == {
        "error": "LLMError",
        "message": "the LLM endpoint failed after 4 retries",
        "status": 502,
    }


def test_an_unexpected_failure_is_an_internal_error_event_without_details() -> None:
    async def run(on_hop: HopCallback) -> AskResponse:
        raise RuntimeError("secret stack detail")

    events = collect(run)
    assert [name for name, _ in events] == ["error"]
    assert events[0][1]["error"] == "InternalError" and "secret" not in events[0][1]["message"]
