"""The OpenAPI document's security schemes and the API docs page, served without any CDN.

``/openapi.json`` declares the two bearer tokens (the agent token for ``/v1/*``, the review
token for ``POST /v1/reviews/{id}``; ``/v1/health`` needs none). ``/docs`` is Swagger UI
from the ``swagger-ui-bundle`` package, served from ``/docs/static``: it works offline.
"""

from __future__ import annotations

from typing import Any

import swagger_ui_bundle  # type: ignore[import-untyped]
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

AGENT_SCHEME = "agentToken"
REVIEW_SCHEME = "reviewToken"
SECURITY_SCHEMES: dict[str, dict[str, str]] = {
    AGENT_SCHEME: {"type": "http", "scheme": "bearer",
                   "description": "the API (agent) token: `token` in the data directory"},
    REVIEW_SCHEME: {"type": "http", "scheme": "bearer",
                    "description": "the human review token: `review-token` in the data directory"},
}
PUBLIC = {"/v1/health"}


def security_of(path: str, method: str) -> list[dict[str, list[str]]] | None:
    """Which token a route needs, as OpenAPI security requirements (None: public)."""
    if not path.startswith("/v1/") or path in PUBLIC:
        return None
    if method == "post" and path.startswith("/v1/reviews/"):
        return [{REVIEW_SCHEME: []}]
    return [{AGENT_SCHEME: []}]


def install_api_docs(app: FastAPI) -> None:
    """Replace FastAPI's CDN-based /docs and the plain /openapi.json (create the app with docs_url=None)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            doc.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
            for path, ops in doc.get("paths", {}).items():
                for method, op in ops.items():
                    needed = security_of(path, method)
                    if needed is not None:
                        op["security"] = needed
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.mount("/docs/static", StaticFiles(directory=swagger_ui_bundle.swagger_ui_path), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} API",
                                   swagger_js_url="/docs/static/swagger-ui-bundle.js",
                                   swagger_css_url="/docs/static/swagger-ui.css",
                                   swagger_favicon_url="/docs/static/favicon-32x32.png")
