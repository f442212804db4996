"""The inspector in a real browser: Debian's headless Chromium driven by Playwright.

The sidecar's app (over an in-process pipeline, no Ray) is served by uvicorn on loopback.
The test logs in, finds a memory, opens its history, asks what would be injected (now and
as of a past date), checks that the agent token cannot settle a review, then settles it
with the review token. A page that breaks (an HTTP error, a script error, a blocked
resource) fails the test. Screenshots go to the test's folder; with
``DYNMEM_UPDATE_SCREENSHOTS=1`` they are also copied to ``eval/results/inspector/``.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from bridge.app import create_app
from inspector_seed import PROJECT, Seeded

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[3]
SHOTS = ROOT / "eval" / "results" / "inspector"
CHROMIUM = next((p for p in (os.environ.get("DYNMEM_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                              shutil.which("chromium-browser")) if p and Path(p).exists()), None)


@pytest.fixture
def server(seeded: Seeded) -> Iterator[str]:
    app = create_app(seeded.pipe, seeded.data_dir)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not (srv.started and srv.servers):
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    port = srv.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine: `apt-get install chromium` (scripts/setup.sh does it when run as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is installed by scripts/setup.sh (test extra)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


class Watch:
    """Everything that means a page broke: HTTP errors, script errors, console errors (CSP included)."""

    def __init__(self, page: Any, allowed_status: set[int]) -> None:
        self.problems: list[str] = []
        self.allowed = allowed_status
        page.on("pageerror", lambda exc: self.problems.append(f"script error: {exc}"))
        page.on("console", lambda msg: msg.type == "error" and self._console(msg.text))
        page.on("response", lambda r: r.status >= 400 and r.status not in self.allowed
                and self.problems.append(f"HTTP {r.status} {r.url}"))

    def _console(self, text: str) -> None:
        if any(f"status of {code} " in text for code in self.allowed):
            return  # the refused log-in and review decision below, expected (and checked on the page)
        self.problems.append(f"console error: {text}")


def _shot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    if os.environ.get("DYNMEM_UPDATE_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, SHOTS / f"{name}.png")


def _login(page: Any, base: str, token: str, next_path: str = "/ui") -> None:
    page.goto(base + next_path)
    assert "/ui/login" in page.url  # not logged in: sent to the form
    page.fill("#token", token)
    page.click("#login")
    page.wait_for_load_state()


def test_log_in_find_a_memory_open_its_history_and_settle_a_review(server: str, browser: Any, seeded: Seeded,
                                                                  tmp_path: Path) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    watch = Watch(page, allowed_status={401, 403})

    # A wrong token is refused (negative), the agent token opens the read pages (positive).
    page.goto(server + "/ui")
    _shot(page, tmp_path, "login")
    page.fill("#token", "not-a-token")
    page.click("#login")
    assert "neither the agent token nor the review token" in page.inner_text("[role=alert]")
    page.fill("#token", seeded.token)
    page.click("#login")
    page.wait_for_url(server + "/ui")
    assert "agent token (read only)" in page.inner_text("header")
    assert page.inner_text("a.project-link") == PROJECT
    _shot(page, tmp_path, "projects")

    # Find a memory: filter by search text and state, then open it.
    page.click("a.project-link")
    page.fill("#q", "port")
    page.select_option("#state", "active")
    page.click("#filter")
    rows = page.locator("a.memory-link")
    assert rows.all_inner_texts() == ["The API server listens on port 7070."]
    page.goto(f"{server}/ui/memories?project={PROJECT}")
    page.fill("#q", "7070")  # the live filter (inspector.js) hides the other rows while typing
    visible = [t for t, v in zip(rows.all_inner_texts(), [r.is_visible() for r in rows.all()]) if v]
    assert visible == ["The API server listens on port 7070."]
    assert page.inner_text("p.count").startswith("1 of ")
    _shot(page, tmp_path, "memories")
    page.click("text=The API server listens on port 7070.")

    # Its history: both versions on the timeline, the source turn, the audit trail.
    timeline = page.inner_text("#versions")
    assert "port 8080" in timeline and "port 7070" in timeline
    assert page.locator("#versions li.state-superseded").count() == 1
    assert "the API server moved to port 7070" in page.inner_text("#sources")
    assert "supersede" in page.inner_text("#audit") or "create" in page.inner_text("#audit")
    assert page.inner_text("#memory-state") == "active"
    _shot(page, tmp_path, "memory")

    # What would be injected, now and as of a date before the move.
    page.goto(f"{server}/ui/inject?project={PROJECT}")
    page.fill("#question", "which port does the API server listen on?")
    page.click("#ask")
    assert "port 7070" in page.inner_text("#block") and "8080" not in page.inner_text("#block")
    page.fill("#as-of", "2026-03-15T12:00")
    page.click("#ask")
    assert "port 8080" in page.inner_text("#block") and "7070" not in page.inner_text("#block")
    _shot(page, tmp_path, "inject")

    # The agent token cannot settle a review: refused, and the review stays open.
    review_id = seeded.open_reviews()[0].review.id
    page.goto(f"{server}/ui/reviews?project={PROJECT}")
    assert "you can read reviews, not settle them" in page.inner_text("main")
    page.click(f"#review-{review_id} button[value=accept]")
    assert "needs the review token" in page.inner_text("[role=alert]")
    assert [r.review.id for r in seeded.open_reviews()] == [review_id]

    # Log out, log in with the review token, settle it.
    page.click("header button[type=submit]")
    page.wait_for_url("**/ui/login")
    _login(page, server, seeded.review_token, f"/ui/reviews?project={PROJECT}")
    assert "review token" in page.inner_text("header")
    _shot(page, tmp_path, "reviews")
    page.fill(f"#review-{review_id} input[name=note]", "moved to us-east-2 in April")
    page.click(f"#review-{review_id} button[value=accept]")
    page.wait_for_load_state()
    assert "decided: accept_new" in page.inner_text(f"#review-{review_id}")
    assert seeded.open_reviews() == []
    decided = seeded.pipe.reviews(PROJECT, None)[0].review
    assert decided.decided_by == "human"  # type: ignore[attr-defined]

    # The remaining pages render.
    for path, name in ((f"/ui/work?project={PROJECT}", "work"), (f"/ui/stats?project={PROJECT}", "stats")):
        page.goto(server + path)
        assert page.locator("h1").first.is_visible()
        _shot(page, tmp_path, name)

    assert watch.problems == [], watch.problems
    ctx.close()


def test_a_cross_site_form_cannot_act_with_the_session(server: str, browser: Any, seeded: Seeded) -> None:
    ctx = browser.new_context()
    page = ctx.new_page()
    _login(page, server, seeded.review_token, f"/ui/reviews?project={PROJECT}")
    review_id = seeded.open_reviews()[0].review.id
    url = f"{server}/ui/reviews/{review_id}?project={PROJECT}"
    csrf = page.get_attribute("input[name=csrf]", "value")
    # The session cookie is sent with these requests; the token or the origin is wrong.
    no_token = ctx.request.post(url, form={"decision": "accept"}, max_redirects=0)
    wrong_site = ctx.request.post(url, form={"decision": "accept", "csrf": csrf},
                                  headers={"Origin": "http://evil.example"}, max_redirects=0)
    assert (no_token.status, wrong_site.status) == (403, 403)
    assert [r.review.id for r in seeded.open_reviews()] == [review_id]
    ok = ctx.request.post(url, form={"decision": "keep_both", "csrf": csrf}, max_redirects=0)  # positive control
    assert ok.status == 303 and seeded.open_reviews() == []
    ctx.close()
