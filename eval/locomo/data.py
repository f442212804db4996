"""LoCoMo (locomo10.json) as turns and questions with their evidence dialogue ids.

Data: Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024 (arXiv:2402.17753), https://github.com/snap-research/locomo, CC BY-NC 4.0
(non-commercial use, attribution required). See ``../shared/eval-data/locomo/README.md``.

Category ids follow LoCoMo's own ``task_eval/evaluation.py``: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial (unanswerable).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D\d+:\d+")


class Turn(BaseModel):
    model_config = ConfigDict(frozen=True)
    dia_id: str
    session: int
    speaker: str
    text: str
    ts_ms: int

    @property
    def content(self) -> str:
        """What is logged and indexed: the speaker's name, the words, and any shared image's caption."""
        return f"{self.speaker}: {self.text}"


class Question(BaseModel):
    model_config = ConfigDict(frozen=True)
    question: str
    category: int
    evidence: tuple[str, ...]


class Conversation(BaseModel):
    model_config = ConfigDict(frozen=True)
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def parse_session_time(text: str) -> int:
    """'1:56 pm on 8 May, 2023' -> epoch milliseconds (read as UTC)."""
    dt = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def evidence_ids(raw: Any, known: set[str]) -> tuple[str, ...]:
    """Evidence dialogue ids that resolve in the conversation (README: split, skip the malformed)."""
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        for dia in _DIA.findall(str(item)):
            if dia in known and dia not in out:
                out.append(dia)
    return tuple(out)


def parse_conversation(raw: dict[str, Any]) -> Conversation:
    conv = raw["conversation"]
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
    turns: list[Turn] = []
    for n in sessions:
        start = parse_session_time(conv[f"session_{n}_date_time"])
        for i, t in enumerate(conv[f"session_{n}"]):
            text = str(t.get("text", ""))
            if t.get("blip_caption"):
                text = f"{text} [shares a photo: {t['blip_caption']}]"
            # One second apart inside a session keeps the turns ordered by time.
            turns.append(Turn(dia_id=t["dia_id"], session=n, speaker=t["speaker"], text=text, ts_ms=start + i * 1000))
    known = {t.dia_id for t in turns}
    questions = tuple(Question(question=str(q["question"]), category=int(q["category"]),
                               evidence=evidence_ids(q.get("evidence", []), known)) for q in raw["qa"])
    return Conversation(sample_id=raw["sample_id"], turns=tuple(turns), questions=questions)


def load_conversations(path: Path, limit: int | None = None) -> list[Conversation]:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    if limit is not None:
        rows = rows[:limit]
    return [parse_conversation(r) for r in rows]
