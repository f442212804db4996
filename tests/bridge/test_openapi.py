"""The OpenAPI document types every route and declares the bearer schemes; /docs works offline."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from actors.launch import Runtime
from actors.pipeline import Pipeline
from bridge.app import create_app
from engine.retrieval import ScoreTerms
from engine.settings import EmbedderSettings, Settings
from bridge import wire


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    rt = Runtime(tmp_path, Settings().model_copy(update={"embedder": EmbedderSettings(name="hash")}), use_ray=False)
    with TestClient(create_app(Pipeline(rt), tmp_path)) as c:
        yield c
    rt.shutdown()


def untyped_operations(doc: dict[str, Any]) -> list[str]:
    """Operations whose success reply has no schema, or an untyped object (``dict[str, Any]``)."""
    found = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            ok = op["responses"].get("200", {}).get("content", {}).get("application/json", {}).get("schema", {})
            if "$ref" not in ok:
                found.append(f"{method.upper()} {path}")
    return found


def test_every_route_has_a_typed_reply(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert len([op for ops in doc["paths"].values() for op in ops]) >= 19
    assert untyped_operations(doc) == []
    # positive control: the check does see an untyped route
    loose = FastAPI()

    @loose.get("/v1/loose")
    def handler() -> dict[str, Any]:
        return {}

    assert untyped_operations(loose.openapi()) == ["GET /v1/loose"]


def test_the_bearer_schemes_are_declared_per_route(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert set(doc["components"]["securitySchemes"]) == {"agentToken", "reviewToken"}
    assert all(s["scheme"] == "bearer" for s in doc["components"]["securitySchemes"].values())
    paths = doc["paths"]
    assert "security" not in paths["/v1/health"]["get"]
    assert paths["/v1/reviews/{review_id}"]["post"]["security"] == [{"reviewToken": []}]
    assert paths["/v1/recall"]["post"]["security"] == [{"agentToken": []}]
    assert all("security" in op for p, ops in paths.items() if p != "/v1/health" for op in ops.values())


def test_the_docs_page_loads_its_assets_from_the_sidecar(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    urls = re.findall(r"""(?:src|href)=["']([^"']+)""", page.text) + re.findall(r"url: '([^']+)'", page.text)
    assert urls and all(u.startswith("/") for u in urls), urls  # nothing from a CDN
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert "fastapi.tiangolo.com" not in page.text and "cdn.jsdelivr" not in page.text


def test_score_terms_on_the_wire_match_the_engine() -> None:
    assert set(wire.ScoreTermsOut.model_fields) == set(ScoreTerms.model_fields)


def test_every_route_lives_in_the_router_of_its_resource(client: TestClient) -> None:
    """README promise: an endpoint is added in one place, a router of bridge/routes/ (not in create_app)."""
    from bridge.routes import ROUTERS

    doc = client.get("/openapi.json").json()
    served = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops if p.startswith("/v1/")}
    in_routers = {(m, r.path) for router in ROUTERS for r in router.routes for m in getattr(r, "methods", ())
                  if m != "HEAD"}
    assert served == in_routers and len(served) >= 30
    assert all(r.response_model is not None for router in ROUTERS for r in router.routes)  # type: ignore[attr-defined]
