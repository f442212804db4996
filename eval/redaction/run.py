"""``python -m eval.redaction.run [FILE ...]``: how many secrets of a held-out corpus survive redaction.

A corpus is ``{"secrets": [{"id", "text", "secret", "shape"}], "controls": [{"id", "text", "keep"}]}``.
A secret *leaks* when it is still in the redacted text, or when a 12-character piece of a secret
of 16 characters or more is; a control *loses* a token when a ``keep`` substring is gone.
``secrets-heldout-2.json`` was written by a helper who never read ``engine/redact.py`` nor the
first corpus (``tests/fixtures/secrets_independent.json``, which the redactor was fixed against).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from engine.redact import redact

HERE = Path(__file__).resolve().parent


def _leaks(secret: str, out: str) -> bool:
    s = secret.strip()
    if s in out:
        return True
    return len(s) >= 16 and any(s[i:i + 12] in out for i in range(len(s) - 11))


def measure(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    leaked = [c for c in doc["secrets"] if _leaks(c["secret"], redact(c["text"]))]
    lost = [(c["id"], k) for c in doc["controls"] for k in c["keep"] if k not in redact(c["text"])]
    return {"file": path.name, "secrets": len(doc["secrets"]), "leaked": len(leaked),
            "leaked_shapes": dict(Counter(c["shape"] for c in leaked)), "controls": len(doc["controls"]),
            "control_tokens_lost": len(lost)}


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or [HERE / "secrets-heldout-2.json"]
    for f in files:
        print(json.dumps(measure(f)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
