"""A seeded project for the inspector's tests: a changed fact (two versions) and an open review."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest, RememberRequest, ReviewItem
from bridge.auth import REVIEW_TOKEN_FILE, TOKEN_FILE
from engine.models import TurnIn

DAY = 86_400_000
PROJECT = "shop-api"


@dataclass
class Seeded:
    pipe: Pipeline
    rt: Runtime
    data_dir: Path
    clock: FakeClock

    @property
    def token(self) -> str:
        return (self.data_dir / TOKEN_FILE).read_text().strip()

    @property
    def review_token(self) -> str:
        return (self.data_dir / REVIEW_TOKEN_FILE).read_text().strip()

    def open_reviews(self) -> list[ReviewItem]:
        return self.pipe.reviews(PROJECT)


def seed(pipe: Pipeline, clock: FakeClock) -> None:
    """A port that moved (8080, then 7070), a stable fact, and a contradiction filed for review."""
    for text in ("the API server runs on port 8080", "from now on we use pnpm, not npm, for the worker"):
        clock.advance(60_000)
        pipe.observe([TurnIn(project=PROJECT, session="s-1", user=text, assistant="Noted.", ts_ms=clock.now_ms())])
    pipe.drain(PROJECT)
    clock.advance(30 * DAY)  # 2026-04-01
    pipe.observe([TurnIn(project=PROJECT, session="s-2", user="the API server moved to port 7070",
                         assistant="Updated the config.", ts_ms=clock.now_ms())])
    pipe.drain(PROJECT)
    pipe.remember(RememberRequest(project=PROJECT, text="Production deploys go to the cluster eu-west-1."))
    clock.advance(DAY)
    pipe.remember(RememberRequest(project=PROJECT, text="Production deploys go to the cluster us-east-2."))
    pipe.recall(RecallRequest(project=PROJECT, query="where do production deploys go?"))  # suppression -> tension
    pipe.drain(PROJECT)


