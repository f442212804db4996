"""Projects of the data directory, and moving their memories out and in (export, import).

These let the CLI run through a running sidecar (issue 13): while ``dynmem serve`` owns a
data directory's stores, the CLI must not open them a second time (one writer per SQLite
file). Wire models live here with their routes (``extra="forbid"``, every field described).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field, ValidationError

from bridge import wire
from bridge.routes.context import Ctx, ProjectQuery
from engine.errors import InvalidInput
from engine.models import Memory
from engine.scopes import project_scope

router = APIRouter(tags=["projects"])

#: Memories per import request: an export line is about 1 KB, the body limit is 1 MiB.
IMPORT_CHUNK = 200


class ProjectsReply(wire.Body):
    projects: list[str] = Field(description="projects with stores in the sidecar's data directory, sorted")
    data_dir: str = Field(description="the data directory the sidecar serves")


class ExportReply(wire.Body):
    # Not list[Memory]: the rows are the engine's Memory model as JSON (its fields carry no wire descriptions)
    memories: list[dict[str, Any]] = Field(description="every memory of the project, in every state (the Memory model)")


class ImportBody(wire.Body):
    project: wire.Project = wire.ProjectField
    memories: list[dict[str, Any]] = Field(max_length=IMPORT_CHUNK * 5, description="memories as written by export")


class ImportReply(wire.Body):
    imported: int = Field(description="memories restored")


@router.get("/v1/projects", response_model=ProjectsReply)
def projects(ctx: Ctx) -> ProjectsReply:
    return ProjectsReply(projects=ctx.pipe.rt.projects_on_disk(), data_dir=str(ctx.data_dir))


@router.get("/v1/export", response_model=ExportReply)
def export(project: ProjectQuery, ctx: Ctx) -> ExportReply:
    return ExportReply(memories=[m.model_dump(mode="json") for m in ctx.pipe.export(project)])


@router.post("/v1/import", response_model=ImportReply)
def import_(body: ImportBody, ctx: Ctx) -> ImportReply:
    try:
        rows = [Memory.model_validate(m) for m in body.memories]
    except ValidationError as exc:
        raise InvalidInput(f"not a memory: {exc.errors()[0]['msg']}") from exc
    scope = project_scope(body.project)  # as `dynmem import` does: the rows join this project
    rows = [m if m.scope == "global" else m.model_copy(update={"scope": scope}) for m in rows]
    return ImportReply(imported=ctx.pipe.import_memories(body.project, rows))
