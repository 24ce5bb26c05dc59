"""Fuzz cases for every HTTP route, as hypothesis strategies, and the one check every answer must pass.

Shared by the fuzz tests (``tests/server/test_fuzz_routes.py``, a bounded number of examples in ``make
test``) and ``benchmarks/hardening.py`` (more examples, counted per category). A case is a request: method,
path, and a JSON body (sent ASCII-escaped, so lone surrogates travel), a raw body, query parameters or a
multipart form. :func:`problems` lists what is wrong with an answer: a 5xx, a stack trace or a server path
in the body, an internal error inside a stream.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import httpx
from hypothesis import strategies as st

# what no answer may contain (the inputs are generated without them, so an echo cannot trip the check)
LEAK_MARKERS = ("Traceback", "/work", "/tmp", ".py", 'File "', "site-packages")
INVALID_TEXTS = ["\ud800", "\udfff", "\x00", "\u200b", "\ufeff", "\u2060"]
SPECIAL_TEXTS = [
    "",
    " ",
    "\u200b",
    " \u200b\ufeff\n",
    "a b",
    ".",
    "..",
    "metadata.",
    "metadata",
    "../edge/demo",
    "../edge/nope",
    "x" * 300,
    "é" * 200,
    "%00",
    "fixture",
    "practitioners",
    "stroke risk",
    "atrial fibrillation anticoagulation",
    "statins",
]
FIELD_NAMES = ["section", "year", "source", "title", "doc_id", "page", "authors", "acl", "text", "journal"]
FIELD_NAMES += ["metadata.journal", "metadata", "a b", ".", "metadata.", "", "year_from", "x" * 200]
FILTER_KEYS = ["equals", "year_from", "year_to", "sources", "acl_groups", "doc_ids", "year_form", "source"]
BIG_INTS = [2**63, 2**63 - 1, -(2**63), -(2**63) - 1, 2**64, 10**40, 0, -1, 2010]


def texts(max_size: int = 30) -> st.SearchStrategy[str]:
    """Any text, the special ones above, and text around a lone surrogate, NUL or zero-width character."""
    around = st.tuples(st.text(max_size=8), st.sampled_from(INVALID_TEXTS), st.text(max_size=8)).map("".join)
    return st.one_of(st.text(max_size=max_size), st.sampled_from(SPECIAL_TEXTS), around)


def integers() -> st.SearchStrategy[int]:
    return st.one_of(st.integers(), st.sampled_from(BIG_INTS))


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), integers(), st.floats(), texts())


def json_values(max_leaves: int = 6) -> st.SearchStrategy[Any]:
    """Any JSON value (NaN and infinities included: Python's JSON reader takes them)."""
    return st.recursive(
        scalars(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts(10), inner, max_size=3),
        max_leaves=max_leaves,
    )


@dataclass
class Deep:
    """JSON nested ``depth`` lists deep, sent as text (a client could not encode it as Python lists)."""

    depth: int

    def text(self) -> str:
        return "[" * self.depth + "]" * self.depth


def filters() -> st.SearchStrategy[Any]:
    """Filters: well-formed ones with fuzzed field names and values, unknown keys, deep nesting, any JSON."""
    value = st.one_of(scalars(), st.lists(scalars(), max_size=4), json_values(4))
    shaped = st.dictionaries(
        st.sampled_from(FILTER_KEYS),
        st.one_of(
            st.dictionaries(st.one_of(st.sampled_from(FIELD_NAMES), texts(12)), value, max_size=3),
            integers(),
            st.lists(texts(12), max_size=4),
            value,
        ),
        max_size=3,
    )
    deep = st.integers(1, 6000).map(Deep)
    return st.one_of(shaped, deep, json_values(4))


def _encode(value: Any) -> str:
    """JSON text of ``value`` (ASCII-escaped), with :class:`Deep` parts written out."""
    if isinstance(value, Deep):
        return value.text()
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))}: {_encode(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_encode(v) for v in value) + "]"
    return json.dumps(value)


@dataclass
class Case:
    """One request of a fuzz category."""

    method: str
    path: str
    body: Any = None  # JSON body (dict/list/scalar, may hold Deep); None: none
    raw: bytes | None = None  # a raw body instead of JSON
    params: dict[str, str] = field(default_factory=dict)
    files: dict[str, Any] | None = None  # multipart form fields (no file parts)
    stream: bool = False

    def text(self) -> str:
        """Everything the case sends, as text (for the no-echo assumption)."""
        body = _encode(self.body) if self.body is not None else ""
        return f"{self.path} {body} {self.raw!r} {self.params} {self.files}"

    def send(self, client: httpx.Client) -> httpx.Response:
        """Send the case (lone surrogates go as the bytes they would encode to) and read the answer to its end."""
        headers = {}
        content: bytes | None = self.raw
        if self.body is not None:
            content = _encode(self.body).encode()
            headers["Content-Type"] = "application/json"
        if self.files is not None:
            content = urlencode(self.files, encoding="utf-8", errors="surrogatepass").encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        path = self.path
        if self.params:
            path += "?" + urlencode(self.params, encoding="utf-8", errors="surrogatepass")
        request = client.build_request(self.method, path, content=content, headers=headers)
        response = client.send(request, stream=self.stream)
        response.read()  # a stream is read to its end: it must end
        return response


def sendable(case: Case) -> bool:
    """False when the input itself holds a leak marker (an echo of it would look like a leak)."""
    return not any(marker in case.text() for marker in LEAK_MARKERS)


def problems(response: httpx.Response) -> list[str]:
    """What is wrong with an answer: a 5xx, a leaked trace or path, an internal error inside a stream."""
    found = []
    if response.status_code >= 500:
        found.append(f"status {response.status_code}")
    text = response.text
    found += [f"body holds {marker!r}" for marker in LEAK_MARKERS if marker in text]
    if "InternalError" in text:
        found.append("an internal error in the body")
    return found


def segment(text: str) -> str:
    """``text`` as one URL path segment (a lone surrogate goes as the bytes of its UTF-8-like encoding)."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def _query_body(extra: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    optional = {
        "collection": st.one_of(texts(), st.sampled_from(["fixture", "practitioners", "x" * 300])),
        "filters": filters(),
        "surprise": json_values(2),
        **extra,
    }
    return st.fixed_dictionaries({"query": st.one_of(texts(), json_values(2))}, optional=optional)


def _search() -> st.SearchStrategy[Case]:
    extra = {"k": integers(), "mode": st.one_of(texts(8), st.sampled_from(["bm25", "dense", "hybrid"]))}
    return _query_body(extra).map(lambda b: Case("POST", "/api/search", b))


def _filters() -> st.SearchStrategy[Case]:
    body = st.fixed_dictionaries(
        {"query": st.just("stroke risk"), "filters": filters(), "mode": st.just("bm25")}
    )
    return body.map(lambda b: Case("POST", "/api/search", b))


def _unified() -> st.SearchStrategy[Case]:
    body = _query_body({"max_hops": st.one_of(integers(), st.just(1)), "stream": st.booleans()})
    return body.map(lambda b: Case("POST", "/api/unified-search", b, stream=bool(b.get("stream") is True)))


def _stream_get() -> st.SearchStrategy[Case]:
    params = st.fixed_dictionaries(
        {"query": texts()},
        optional={
            "collection": texts(),
            "max_hops": st.one_of(integers().map(str), texts(6)),
            "filters": filters().map(_encode),
        },
    )
    return params.map(lambda p: Case("GET", "/api/unified-search/stream", params=p, stream=True))


def _regenerate() -> st.SearchStrategy[Case]:
    path = st.sampled_from(["/api/quick-summary", "/api/detailed-answer"])
    body = st.one_of(st.fixed_dictionaries({"request_id": texts()}), json_values(3))
    return st.tuples(path, body).map(lambda pb: Case("POST", pb[0], pb[1]))


def _practitioners() -> st.SearchStrategy[Case]:
    location = st.one_of(
        texts(), st.fixed_dictionaries({}, optional={"city": texts(), "state": texts(6), "zip": texts(8)})
    )
    message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "x"]), "content": texts()})
    body = st.fixed_dictionaries(
        {"userQuery": st.one_of(texts(), st.sampled_from(["knee pain", "I need SVT ablation"]))},
        optional={
            "location": location,
            "locationMode": texts(8),
            "limit": integers(),
            "messages": st.lists(message, max_size=2),
        },
    )
    return body.map(lambda b: Case("POST", "/api/practitioners/search", b))


def _report() -> st.SearchStrategy[Case]:
    citation = st.fixed_dictionaries(
        {"id": integers(), "chunk_id": texts(), "doc_id": texts(), "text": texts()},
        optional={"title": texts(), "year": integers(), "url": texts()},
    )
    answer = st.fixed_dictionaries(
        {"request_id": texts(), "query": texts(), "summary": texts(), "answer": texts()},
        optional={"citations": st.lists(citation, max_size=2), "subanswers": json_values(2)},
    )
    fmt = st.one_of(st.sampled_from(["markdown", "bibtex", "ris", "csv"]), texts(8))
    return st.tuples(answer, fmt).map(lambda af: Case("POST", "/api/report", af[0], params={"format": af[1]}))


def _saved_answers() -> st.SearchStrategy[Case]:
    """Saved answers: the listing's parameters, and ids (never one that exists) on every per-answer route."""
    listing = st.fixed_dictionaries(
        {}, optional={"collection": texts(), "limit": st.one_of(integers(), texts(6))}
    )
    ids = st.one_of(texts(), st.sampled_from(["..", "%2e%2e", "x" * 300, "../answers.sqlite", "a" * 64]))
    per_answer = st.sampled_from(
        [
            ("GET", ""),
            ("DELETE", ""),
            ("POST", "/rerun"),
            ("GET", "/report?format=csv"),
            ("GET", "/report?format=x"),
        ]
    )
    return st.one_of(
        listing.map(lambda p: Case("GET", "/api/answers", params=p)),
        st.tuples(per_answer, ids).map(lambda mi: Case(mi[0][0], f"/api/answers/{segment(mi[1])}{mi[0][1]}")),
    )


def _files() -> st.SearchStrategy[Case]:
    names = st.one_of(texts(), st.sampled_from(["fixture", "practitioners", "..", "%2e%2e"]))
    ids = st.one_of(texts(), st.sampled_from(["af-stroke-1", "../../etc/passwd", "a/../../b", "x" * 600]))
    return st.tuples(names, ids).map(lambda ci: Case("GET", f"/files/{segment(ci[0])}/{segment(ci[1])}"))


def _document_view() -> st.SearchStrategy[Case]:
    names = st.one_of(texts(), st.sampled_from(["fixture", "practitioners", "..", "%2e%2e"]))
    ids = st.one_of(texts(), st.sampled_from(["af-stroke-1", "../../etc/passwd", "a/../../b", "x" * 600]))
    passages = st.one_of(st.none(), texts(), st.sampled_from(["af-stroke-1:0", "x" * 5000]))
    return st.tuples(names, ids, passages).map(
        lambda cip: Case(
            "GET",
            "/api/document-view",
            params={"collection": cip[0], "document": cip[1], **({"passage": cip[2]} if cip[2] else {})},
        )
    )


def _static() -> st.SearchStrategy[Case]:
    escaped = [
        "common.js",
        "common.js%00",
        "x" * 300,
        "x" * 5000,
        "..%2F..%2Fpyproject.toml",
        "%00",
        "%2e%2e",
    ]
    names = st.one_of(texts().map(segment), st.sampled_from(escaped))
    folders = st.sampled_from(["", "pdfjs/", "pdfjs/standard_fonts/", "pdfjs/../"])
    return st.tuples(folders, names).map(lambda fn: Case("GET", f"/static/{fn[0]}{fn[1]}"))


def _upload() -> st.SearchStrategy[Case]:
    """Uploads that can never ingest: no file part, so a bad name or field is refused, never written."""
    names = st.one_of(texts(), st.sampled_from(["fz-new", "practitioners", "../edge/demo", "x" * 300]))
    form = st.dictionaries(st.sampled_from(["on_error", "acl", "files", "x"]), texts(12), max_size=3)
    return st.tuples(names, form).map(
        lambda nf: Case("POST", f"/api/collections/{segment(nf[0])}/documents", files=nf[1])
    )


def _jobs() -> st.SearchStrategy[Case]:
    tail = st.sampled_from(["", "/events"])
    return st.tuples(texts(), tail).map(
        lambda jt: Case("GET", f"/api/jobs/{segment(jt[0])}{jt[1]}", stream=True)
    )


def _raw() -> st.SearchStrategy[Case]:
    """Bodies that are not what a route expects: bytes, broken or deep JSON, JSON of the wrong shape."""
    paths = st.sampled_from(
        [
            "/api/search",
            "/api/unified-search",
            "/api/quick-summary",
            "/api/practitioners/search",
            "/api/report",
        ]
    )
    broken = st.one_of(
        st.binary(max_size=60),
        st.integers(1, 6000).map(lambda n: ("[" * n + "]" * n).encode()),
        st.integers(1, 3000).map(lambda n: ('{"query": "a", "filters": ' * n + "{}" + "}" * n).encode()),
        json_values(4).map(lambda v: json.dumps(v).encode()),
    )
    return st.tuples(paths, broken).map(lambda pb: Case("POST", pb[0], raw=pb[1]))


def as_objects(value: Any) -> Any:
    """``value`` with a :class:`Deep` part as Python lists (at most 200 deep: the MCP client serialises no deeper)."""
    if isinstance(value, Deep):
        nested: list[Any] = []
        for _ in range(min(value.depth, 200) - 1):
            nested = [nested]
        return nested
    if isinstance(value, dict):
        return {k: as_objects(v) for k, v in value.items()}
    return [as_objects(v) for v in value] if isinstance(value, list) else value


def tool_arguments(tool: str, collection_name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Fuzzed arguments of an MCP tool over a data dir holding ``collection_name``."""
    collection = st.one_of(texts(), st.sampled_from([collection_name, "practitioners", "x" * 300]))
    surprise = {"surprise": json_values(2)}
    if tool == "search":
        optional = {
            "collection": collection,
            "mode": texts(8),
            "k": integers(),
            "filters": filters().map(as_objects),
            **surprise,
        }
        return st.fixed_dictionaries({"query": texts()}, optional=optional)
    if tool in ("ask", "research"):
        optional = {"collection": collection, "max_hops": integers(), **surprise}
        return st.fixed_dictionaries({"question": texts()}, optional=optional)
    if tool == "find_practitioners":
        location = st.fixed_dictionaries({}, optional={"city": texts(), "state": texts(6), "zip": texts(8)})
        message = st.fixed_dictionaries({"role": st.sampled_from(["user", "x"]), "content": texts()})
        optional = {"location": location, "limit": integers(), "messages": st.lists(message, max_size=2)}
        return st.fixed_dictionaries({"request": texts()}, optional={**optional, **surprise})
    if tool in ("saved_answer", "rerun_answer", "delete_saved_answer"):
        ids = st.one_of(texts(), st.sampled_from(["..", "x" * 300, "../answers.sqlite"]))
        return st.fixed_dictionaries({"answer_id": ids}, optional=surprise)
    if tool == "saved_answers":
        return st.fixed_dictionaries({}, optional={"collection": collection, **surprise})
    return st.fixed_dictionaries({}, optional=surprise)


# category -> (strategy of cases, examples in make test)
CATEGORIES: dict[str, tuple[Callable[[], st.SearchStrategy[Case]], int]] = {
    "search": (_search, 30),
    "filters": (_filters, 40),
    "unified-search": (_unified, 12),
    "stream-get": (_stream_get, 12),
    "regenerate": (_regenerate, 15),
    "practitioners": (_practitioners, 15),
    "report": (_report, 15),
    "saved-answers": (_saved_answers, 20),
    "files": (_files, 20),
    "document-view": (_document_view, 15),
    "static": (_static, 20),
    "upload": (_upload, 15),
    "jobs": (_jobs, 10),
    "raw-bodies": (_raw, 25),
}
