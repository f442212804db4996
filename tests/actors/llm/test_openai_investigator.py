"""The openai client's model-driven repair investigator, against the scripted fake server.

The model chooses the reads; the service's budgeted log enforces the budget and the causal
bound whatever it asks for, and the grounding check judges what it proposes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actors.investigator_actor import InvestigatorService, RepairSignal
from actors.llm.endpoint import Endpoint
from actors.llm.openai_client import OpenAIClient
from actors.store.log_store import LogStore
from engine.errors import ModelBadReply
from engine.models import Origin, TurnIn
from engine.settings import ModelSettings
from fakes.openai_server import FakeOpenAI

T0 = 1_767_225_600_000
TURNS = [
    ("we use pnpm for everything", "Noted."),
    ("the API listens on port 9090", "OK."),
    ("oh and the on-call pager rotation lives in the ops/rotations.yaml file", "Noted."),  # u3
    ("run the tests", "All 120 tests pass."),
    ("where is the pager rotation kept?", "I do not know."),  # u5: the signal
    ("the pager rotation moved to ops/oncall/pager.yaml", "OK."),  # u6: after the signal
]
SIGNAL = RepairSignal(query="where is the pager rotation kept?", kind="abstained", bound_turn=5, scope="project:p")
IDLE = {"query": "", "around_turn": 0, "unit_id": "", "proposals": []}


def act(action: str, **kw: Any) -> str:
    return json.dumps({**IDLE, "action": action, **kw})


def proposal(text: str, *cites: str, key: str = "", value: str = "") -> dict[str, Any]:
    return {"text": text, "key": key, "value": value, "kind": "fact", "salience": 0.7, "negated": False,
            "source_unit_ids": list(cites)}


@pytest.fixture
def log(tmp_path: Path) -> Iterator[LogStore]:
    store = LogStore(tmp_path / "log.sqlite")
    store.append([TurnIn(project="p", user=u, assistant=a, ts_ms=T0 + i) for i, (u, a) in enumerate(TURNS)], T0)
    yield store
    store.close()


def service(fake: FakeOpenAI, tmp_path: Path) -> InvestigatorService:
    s = ModelSettings(client="openai", openai_base_url=fake.base_url, openai_model="fake-model", max_retries=0,
                      timeout_s=5.0)
    return InvestigatorService.with_client(OpenAIClient(s, tmp_path, endpoint=Endpoint(s, sleep=lambda _: None)))


def test_the_model_reads_then_proposes_and_only_grounded_proposals_are_accepted(log: LogStore,
                                                                                tmp_path: Path) -> None:
    script = [
        {"user_contains": "tool_result", "text": act("propose", proposals=[
            proposal("The on-call pager rotation lives in ops/rotations.yaml.", "u3", key="pager rotation",
                     value="ops/rotations.yaml"),
            proposal("The pager rotation lives in ops/oncall/pager.yaml.", "u6"),  # after the signal
            proposal("The pager rotation is owned by Priya.", "u3")])},  # not in the cited unit
        {"text": act("search", query="pager rotation")},
    ]
    with FakeOpenAI(script) as fake:
        inv = service(fake, tmp_path).investigate(SIGNAL, log)
        bodies = fake.chat_requests()
    assert [(v.accepted, v.reason) for v in inv.verdicts] == [
        (True, "grounded in u3"),  # positive control
        (False, "cites unit u6 at or after the signal (turn 5)"),
        (False, "text not in the cited units: 'priya'"),
    ]
    assert all(p.origin is Origin.REPAIR and p.prompt_version == "investigate-v1" for p in inv.proposals)
    assert inv.calls_used == 1 and [c.tool for c in inv.trace] == ["search"]
    assert len(bodies) == 2
    assert "ops/rotations.yaml" in json.dumps(bodies[1])  # the tool result went back to the model
    assert "oncall/pager.yaml" not in json.dumps(bodies)  # the unit after the bound was never shown


def test_a_model_that_keeps_reading_is_stopped_by_the_budget(log: LogStore, tmp_path: Path) -> None:
    script = [
        {"user_contains": "propose now", "text": act("propose", proposals=[
            proposal("The on-call pager rotation lives in ops/rotations.yaml.", "u3")])},
        {"text": act("timeline", around_turn=99)},  # asks past the bound every time
    ]
    with FakeOpenAI(script) as fake:
        inv = service(fake, tmp_path).investigate(SIGNAL, log, budget_calls=3)
        bodies = fake.chat_requests()
    assert inv.calls_used == 3 and "tool-call budget of 3 spent" in inv.stopped
    assert [c.refused for c in inv.trace] == [False, False, False, True]
    assert max(int(n) for c in inv.trace for n in [c.args.get("around_turn") or 0]) == 4  # clamped before the bound
    assert len(bodies) == 5  # three reads, the refused fourth, then the last call to propose
    assert "oncall/pager.yaml" not in json.dumps(bodies)
    assert [v.accepted for v in inv.verdicts] == [True]


def test_a_reply_that_never_validates_is_a_bad_reply(log: LogStore, tmp_path: Path) -> None:
    with FakeOpenAI([{"text": json.dumps({"action": "dance"})}]) as fake:
        with pytest.raises(ModelBadReply):
            service(fake, tmp_path).investigate(SIGNAL, log)
        assert len(fake.chat_requests()) == 2  # asked once more with the error, then gave up
    with FakeOpenAI([{"text": act("propose")}]) as fake:  # control: a valid empty answer
        assert service(fake, tmp_path).investigate(SIGNAL, log).proposals == []
