"""The UI's pages and static files over plain HTTP: served from the package, nothing outside it."""

from __future__ import annotations

import re

import httpx
import pytest

from ui.conftest import LiveApp

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", ["/", "/practitioners"])
def test_pages_render_with_their_settings(live_app: LiveApp, path: str) -> None:
    response = httpx.get(live_app.url + path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<html lang="en">' in response.text and 'name="viewport"' in response.text
    if path == "/":
        assert 'data-default="demo"' in response.text
        limit = live_app.settings.research.planning.max_question_chars
        # the limit is served to the page and said where the user types; the box never cuts a question
        assert f'data-max-chars="{limit}"' in response.text and f"0 / {limit:,} characters" in response.text
        assert not re.search(r'<textarea id="question"[^>]*maxlength', response.text)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("deepcite.css", "text/css"), ("common.js", "text/javascript"), ("research.js", "text/javascript")],
)
def test_static_files_are_served(live_app: LiveApp, name: str, kind: str) -> None:
    response = httpx.get(f"{live_app.url}/static/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(kind)


def test_the_site_icon_is_served_where_browsers_ask(live_app: LiveApp) -> None:
    for path in ("/favicon.ico", "/static/favicon.svg"):
        response = httpx.get(live_app.url + path)
        assert response.status_code == 200 and response.headers["content-type"].startswith("image/svg+xml")
        assert response.text.startswith("<svg")
    assert 'rel="icon"' in httpx.get(live_app.url + "/").text


@pytest.mark.parametrize("name", ["nope.js", "..%2Fui.py", "%2E%2E%2Fui.py", "ui.py", "%2E%2E"])
def test_nothing_outside_the_static_folder_is_served(live_app: LiveApp, name: str) -> None:
    assert httpx.get(f"{live_app.url}/static/{name}").status_code == 404


def test_scripts_never_write_html_from_data() -> None:
    from deepcite.server.ui import STATIC_DIR

    for script in STATIC_DIR.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, f"{script.name} uses {sink}"
