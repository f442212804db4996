"""Routes that let every CLI command run through a running sidecar (issue 13).

While ``dynmem serve`` owns a data directory's stores, the CLI must not open them a second
time (one writer per SQLite file); it talks to the sidecar instead. The core routes of
``bridge/app.py`` cover recall, memories, reviews; these add what the rest of the CLI needs:
projects, export and import, background jobs and repair reports. Wire models live here with
their routes (``extra="forbid"``, every field described), as in ``bridge/wire.py``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import FastAPI, Query
from pydantic import AfterValidator, Field, ValidationError

from actors.pipeline import Pipeline
from actors.wire import RepairRecord
from bridge import wire
from engine.errors import InvalidInput
from engine.models import Job, Memory
from engine.scopes import project_scope

#: Memories per import request: an export line is about 1 KB, the body limit is 1 MiB.
IMPORT_CHUNK = 200

_Project = Annotated[str, Query(min_length=1, max_length=512, pattern=wire.PROJECT_PATTERN,
                                description=wire.PROJECT_DESCRIPTION), AfterValidator(wire.valid_project)]


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


class JobsReply(wire.Body):
    counts: dict[str, dict[str, int]] = Field(description="log jobs by kind and state")
    jobs: list[Job] = Field(description="the jobs asked for, newest first")


class RepairsReply(wire.Body):
    repairs: list[RepairRecord] = Field(description="repair investigations: signal, reads, proposals, verdicts")


def add_cli_routes(app: FastAPI, pipe: Pipeline, data_dir: str) -> None:
    """Register the routes on ``app`` (the bearer token is checked by the app's guard)."""

    @app.get("/v1/projects", response_model=ProjectsReply)
    def projects() -> ProjectsReply:
        return ProjectsReply(projects=pipe.rt.projects_on_disk(), data_dir=data_dir)

    @app.get("/v1/export", response_model=ExportReply)
    def export(project: _Project) -> ExportReply:
        return ExportReply(memories=[m.model_dump(mode="json") for m in pipe.export(project)])

    @app.post("/v1/import", response_model=ImportReply)
    def import_(body: ImportBody) -> ImportReply:
        try:
            rows = [Memory.model_validate(m) for m in body.memories]
        except ValidationError as exc:
            raise InvalidInput(f"not a memory: {exc.errors()[0]['msg']}") from exc
        scope = project_scope(body.project)  # as `dynmem import` does: the rows join this project
        rows = [m if m.scope == "global" else m.model_copy(update={"scope": scope}) for m in rows]
        return ImportReply(imported=pipe.import_memories(body.project, rows))

    @app.get("/v1/jobs/list", response_model=JobsReply)
    def jobs(project: _Project,
             state: Annotated[str | None, Query(pattern="^(pending|running|done|dead)$",
                                                description="only this state")] = None,
             limit: Annotated[int, Query(ge=1, le=1000, description="at most this many")] = 200) -> JobsReply:
        counts, rows = pipe.job_list(project, state, limit)
        return JobsReply(counts=counts, jobs=rows)

    @app.post("/v1/jobs/{job_id}/retry", response_model=JobsReply)
    def retry(job_id: int, project: _Project) -> JobsReply:
        pipe.retry_job(project, job_id)
        counts, rows = pipe.job_list(project, None, 200)
        return JobsReply(counts=counts, jobs=rows)

    # exclude_unset: each investigation comes back as it was recorded (``slot`` on accepted proposals only)
    @app.get("/v1/repairs", response_model=RepairsReply, response_model_exclude_unset=True)
    def repairs(project: _Project,
                limit: Annotated[int, Query(ge=1, le=1000, description="at most this many, newest first")] = 50,
                ) -> RepairsReply:
        return RepairsReply(repairs=pipe.repairs(project, limit))
