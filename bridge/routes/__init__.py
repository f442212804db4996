"""The HTTP API's routes, one ``APIRouter`` per resource.

To add an endpoint: write its request and reply models in ``bridge/wire.py`` (``extra="forbid"``,
a description on every field), a pipeline method if it needs one (``actors/pipeline.py``), and
one function in the router of its resource below, with a ``response_model``; ``create_app``
includes every router of :data:`ROUTERS`, and the CLI reaches a sidecar through
``bridge/client.py``. A new resource is a new module here, added to :data:`ROUTERS`.

    status.py    /v1/health, /v1/jobs, /v1/stats
    turns.py     /v1/observe, /v1/recall, /v1/feedback, /v1/miss
    memories.py  /v1/memories..., /v1/global/memories...
    log.py       /v1/log/search, /v1/log/timeline, /v1/log/window
    truth.py     /v1/conflicts, /v1/reviews..., /v1/audit
    projects.py  /v1/projects, /v1/export, /v1/import
    work.py      /v1/jobs/list, /v1/jobs/{job_id}/retry, /v1/repairs
"""

from __future__ import annotations

from fastapi import APIRouter

from bridge.routes import log, memories, projects, status, truth, turns, work

#: Every router of the API, in the order their routes are matched and documented.
ROUTERS: tuple[APIRouter, ...] = (status.router, turns.router, memories.router, log.router, truth.router,
                                  projects.router, work.router)
