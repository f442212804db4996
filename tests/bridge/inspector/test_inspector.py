"""The inspector without a browser: sessions, CSRF, escaping, headers and the recent-recall panel."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from actors.wire import RememberRequest
from bridge.app import create_app
from inspector_seed import PROJECT, Seeded


@pytest.fixture
def client(seeded: Seeded) -> Iterator[TestClient]:
    with TestClient(create_app(seeded.pipe, seeded.data_dir), raise_server_exceptions=False,
                    base_url="http://127.0.0.1:8000") as c:
        yield c


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html[:500]
    return found.group(1)


def login(client: TestClient, token: str) -> str:
    """Log in; returns the session's CSRF token."""
    form = client.get("/ui/login")
    r = client.post("/ui/login", data={"csrf": _csrf(form.text), "token": token, "next": "/ui"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    return _csrf(client.get("/ui").text)


def test_read_pages_need_a_session_and_the_agent_token_opens_them(client: TestClient, seeded: Seeded) -> None:
    r = client.get(f"/ui/memories?project={PROJECT}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login?next=%2Fui%2Fmemories%3Fproject%3Dshop-api"
    login(client, seeded.token)
    r = client.get(f"/ui/memories?project={PROJECT}")
    assert r.status_code == 200 and "The API server listens on port 7070." in r.text


def test_log_in_refuses_a_wrong_token_and_a_missing_login_csrf(client: TestClient, seeded: Seeded) -> None:
    csrf = _csrf(client.get("/ui/login").text)
    wrong = client.post("/ui/login", data={"csrf": csrf, "token": "nope"}, follow_redirects=False)
    assert wrong.status_code == 401 and "ui" not in {c for c in client.cookies if c == "dynmem_ui"}
    no_csrf = client.post("/ui/login", data={"token": seeded.token}, follow_redirects=False)
    assert no_csrf.status_code == 403
    ok = client.post("/ui/login", data={"csrf": csrf, "token": seeded.token}, follow_redirects=False)
    assert ok.status_code == 303  # positive control
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie


def test_next_after_log_in_is_never_another_site(client: TestClient, seeded: Seeded) -> None:
    for evil in ("//evil.example/ui", "https://evil.example", "/ui\\@evil.example"):
        csrf = _csrf(client.get("/ui/login").text)  # the log-in token is used up by a successful log-in
        r = client.post("/ui/login", data={"csrf": csrf, "token": seeded.token, "next": evil}, follow_redirects=False)
        assert r.headers["location"] == "/ui", evil
    csrf = _csrf(client.get("/ui/login").text)
    r = client.post("/ui/login", data={"csrf": csrf, "token": seeded.token, "next": "/ui/stats?project=x"},
                    follow_redirects=False)
    assert r.headers["location"] == "/ui/stats?project=x"


def test_memory_text_is_escaped_and_pages_carry_a_strict_policy(client: TestClient, seeded: Seeded) -> None:
    seeded.pipe.remember(RememberRequest(project=PROJECT, text='The banner reads <script>alert("x")</script> today.'))
    login(client, seeded.token)
    r = client.get(f"/ui/memories?project={PROJECT}")
    assert "&lt;script&gt;alert(" in r.text and "<script>alert(" not in r.text
    assert "The API server listens on port 7070." in r.text  # positive control: the page has content
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and r.headers["x-frame-options"] == "DENY"


def test_the_agent_session_never_settles_a_review_even_when_the_api_would_let_it(client: TestClient, seeded: Seeded,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    review_id = seeded.open_reviews()[0].review.id
    csrf = login(client, seeded.token)
    url = f"/ui/reviews/{review_id}?project={PROJECT}"
    r = client.post(url, data={"csrf": csrf, "decision": "accept"}, follow_redirects=False)
    assert r.status_code == 403 and "needs the review token" in r.text
    assert len(seeded.open_reviews()) == 1
    csrf = login(client, seeded.review_token)
    bad = client.post(url, data={"csrf": csrf, "decision": "accept_everything"}, follow_redirects=False)
    assert bad.status_code == 422
    ok = client.post(url, data={"csrf": csrf, "decision": "reject", "note": "eu-west-1 is right"}, follow_redirects=False)
    assert ok.status_code == 303 and seeded.open_reviews() == []
    decided: Any = seeded.pipe.reviews(PROJECT, None)[0].review
    assert (decided.decision, decided.decided_by) == ("keep_old", "human")


def test_an_unknown_project_is_a_404_page_and_creates_nothing(client: TestClient, seeded: Seeded) -> None:
    login(client, seeded.token)
    r = client.get("/ui/memories?project=typo")
    assert r.status_code == 404 and "no project named" in r.text and r.headers["content-type"].startswith("text/html")
    assert not seeded.rt.has_project("typo")
    assert client.get(f"/ui/stats?project={PROJECT}").status_code == 200


def test_the_memory_page_shows_the_score_terms_of_recent_recalls(client: TestClient, seeded: Seeded) -> None:
    mid = next(m.id for m in seeded.pipe.memories(PROJECT) if "7070" in m.text)
    login(client, seeded.token)
    page = client.get(f"/ui/memory/{mid}?project={PROJECT}").text
    assert "None since the sidecar started." in page
    r = client.post("/v1/recall", json={"project": PROJECT, "query": "what port is the API on?", "passive": True},
                    headers={"Authorization": f"Bearer {seeded.token}"})
    assert r.status_code == 200 and "7070" in r.json()["context"]
    page = client.get(f"/ui/memory/{mid}?project={PROJECT}").text
    assert "what port is the API on?" in page and "None since the sidecar started." not in page


def test_forget_from_the_memory_page_needs_the_form_token(client: TestClient, seeded: Seeded) -> None:
    mid = next(m.id for m in seeded.pipe.memories(PROJECT) if "7070" in m.text)
    csrf = login(client, seeded.token)
    url = f"/ui/memory/{mid}/forget?project={PROJECT}"
    assert client.post(url, data={"csrf": "guess"}, follow_redirects=False).status_code == 403
    assert client.post(url, data={"csrf": csrf}, headers={"Origin": "http://evil.example"},
                       follow_redirects=False).status_code == 403
    assert seeded.pipe.detail(PROJECT, mid).memory.state.value == "active"
    assert client.post(url, data={"csrf": csrf}, follow_redirects=False).status_code == 303
    assert seeded.pipe.detail(PROJECT, mid).memory.state.value == "retracted"
