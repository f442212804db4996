"""Every typed client mirrors its service: same methods, same parameters, same return types.

mypy checks each call inside a client against the service method it names
(``ref.call(LogService.append, turns)``); this test checks the other half, that the
client's own signature is the service's, so that callers of a client see the service's API.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from actors.clients import CLIENTS, ExtractionClient, LogClient, ServiceClient
from actors.launch import Runtime
from actors.config import load_settings

ROOT = Path(__file__).resolve().parents[2]


def _public(cls: type) -> dict[str, inspect.Signature]:
    """Public methods defined by ``cls`` and its bases (not those of ServiceClient itself or object)."""
    skip = set(ServiceClient.__mro__)
    out: dict[str, inspect.Signature] = {}
    for klass in reversed(cls.__mro__):
        if klass in skip:
            continue
        out.update({name: inspect.signature(fn) for name, fn in vars(klass).items()
                    if not name.startswith("_") and inspect.isfunction(fn)})
    return out


def _mirror_problems(client: type[ServiceClient[object]]) -> list[str]:
    service = _public(client.service)
    mine = _public(client)
    problems = [f"{client.__name__} lacks {name}" for name in service if name not in mine]
    for name, sig in mine.items():
        base = name.removeprefix("submit_")  # submit_x starts x without waiting
        if base not in service:
            problems.append(f"{client.__name__}.{name}: {client.service.__name__} has no method {base!r}")
            continue
        want = service[base]
        if list(sig.parameters.values()) != list(want.parameters.values()):
            problems.append(f"{client.__name__}.{name}{sig} differs from {client.service.__name__}.{base}{want}")
        expected_return = want.return_annotation if name == base else f"Pending[{want.return_annotation}]"
        if sig.return_annotation != expected_return:
            problems.append(f"{client.__name__}.{name} returns {sig.return_annotation}, expected {expected_return}")
    return problems


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.__name__)
def test_every_client_method_mirrors_its_service(client: type[ServiceClient[object]]) -> None:
    assert not _mirror_problems(client)


def test_the_mirror_check_sees_a_renamed_or_changed_method() -> None:
    class Renamed(LogClient):
        def appendd(self, turns: object) -> None:  # a typo'd name
            return None

    class Changed(ExtractionClient):
        def extract(self, units: object, scope: str, extra: int = 0) -> object:  # type: ignore[override]
            return None

    assert _mirror_problems(Renamed) == ["Renamed.appendd: LogService has no method 'appendd'"]
    problems = _mirror_problems(Changed)
    assert any(p.startswith("Changed.extract(") and "differs from ExtractionService.extract" in p for p in problems)
    assert "Changed.extract returns object, expected Extracted" in problems
    assert not _mirror_problems(ExtractionClient)  # positive control


def test_a_renamed_service_method_fails_type_checking(tmp_path: Path) -> None:
    """The acceptance of issue 16: a call through a client that names a missing method is a mypy error."""
    probe = tmp_path / "probe_seam.py"
    probe.write_text(
        "from __future__ import annotations\n"
        "from actors.log_actor import LogService\n"
        "from actors.ref import Ref\n"
        "def use(ref: Ref[LogService]) -> int:\n"
        "    good: int = ref.call(LogService.last_turn)\n"
        "    ref.call(LogService.append, 3)\n"  # wrong argument type
        "    return ref.call(LogService.lastturn)\n",  # a method that does not exist
        encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
                          str(probe)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    out = run.stdout
    assert run.returncode == 1, out
    assert 'has no attribute "lastturn"' in out
    assert 'Argument 2 to "call" of "Ref" has incompatible type "int"' in out
    assert "probe_seam.py:5" not in out  # positive control: the correct call checks


def test_runtime_hands_out_typed_clients(tmp_path: Path) -> None:
    rt = Runtime(tmp_path / "d", load_settings(environ={"DYNMEM_EMBEDDER": "hash"}), use_ray=False)
    try:
        log = rt.log("p")
        assert isinstance(log, LogClient) and log.last_turn() == 0 and not log.remote
        assert rt.engine("p").stats().project == "p"
        assert {type(c) for _, c in rt.supervised_actors()} <= set(CLIENTS)
    finally:
        rt.shutdown()
