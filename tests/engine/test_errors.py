"""Every error of the tree survives pickling whole: class, message, code and every attribute.

Ray pickles an exception raised inside an actor (with ``ray.cloudpickle``) and the caller
re-raises it (``actors.launch.Ref.result``); an attribute lost on the way (such as
``EndpointRejected.status`` coming back as 0) changes what the caller decides.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ray import cloudpickle

from engine.errors import DynmemError


def _import_every_module() -> None:
    """Subclasses defined anywhere in the packages (``EndpointRejected``, ``LineProblem``) join the tree."""
    for name in ("engine", "actors", "bridge"):
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            importlib.import_module(info.name)


def _subclasses(cls: type[DynmemError]) -> Iterator[type[DynmemError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


_import_every_module()
TREE: list[type[DynmemError]] = sorted({DynmemError, *_subclasses(DynmemError)}, key=lambda c: c.__qualname__)

# A strategy per annotation a constructor parameter may carry; a new one fails test_every_parameter_has_a_strategy.
_BY_ANNOTATION: dict[str, st.SearchStrategy[Any]] = {
    "str": st.text(max_size=40),
    "int": st.integers(),
    "float": st.floats(allow_nan=False),
    "bool": st.booleans(),
    "float | None": st.none() | st.floats(allow_nan=False),
    "int | None": st.none() | st.integers(),
    "str | None": st.none() | st.text(max_size=40),
}

_SERIALISERS: dict[str, Callable[[object], bytes]] = {
    "pickle": lambda obj: pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL),
    "pickle-v2": lambda obj: pickle.dumps(obj, protocol=2),
    "ray.cloudpickle": cloudpickle.dumps,
}


def _extra_parameters(cls: type[DynmemError]) -> list[inspect.Parameter]:
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]  # drop self
    return [p for p in params if p.name != "message" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def test_tree_holds_the_subclasses_defined_outside_engine() -> None:
    names = {c.__qualname__ for c in TREE}
    assert {"DynmemError", "EndpointRejected", "LineProblem", "ActorDied", "ModelTimeout"} <= names
    assert len(TREE) >= 24


def test_every_parameter_has_a_strategy() -> None:
    missing = [(c.__qualname__, p.name, p.annotation) for c in TREE for p in _extra_parameters(c)
               if str(p.annotation) not in _BY_ANNOTATION]
    assert not missing, f"add a strategy to _BY_ANNOTATION for {missing}"
    assert any(_extra_parameters(c) for c in TREE)  # positive control: some error has fields of its own


@st.composite
def errors(draw: st.DrawFn) -> DynmemError:
    """Any error of the tree, with drawn constructor arguments and drawn attributes set afterwards."""
    cls = draw(st.sampled_from(TREE))
    kwargs = {p.name: draw(_BY_ANNOTATION[str(p.annotation)]) for p in _extra_parameters(cls)}
    exc = cls(draw(st.text(max_size=80)), **kwargs)
    extra = draw(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True).filter(lambda n: n != "args"),
                                 st.integers() | st.text(max_size=20) | st.lists(st.integers(), max_size=3),
                                 max_size=3))
    for name, value in extra.items():
        setattr(exc, name, value)
    return exc


@settings(max_examples=300, deadline=None)
@given(exc=errors(), how=st.sampled_from(sorted(_SERIALISERS)))
def test_every_error_survives_pickling_with_all_its_fields(exc: DynmemError, how: str) -> None:
    back = pickle.loads(_SERIALISERS[how](exc))
    assert type(back) is type(exc)
    assert back.args == exc.args
    assert str(back) == str(exc)
    assert back.code == exc.code
    assert vars(back) == vars(exc)


def test_endpoint_rejected_keeps_its_status() -> None:
    """The case the issue names; the same round trip with the old reduce gave status 0."""
    from actors.llm.endpoint import EndpointRejected

    exc = EndpointRejected("model 'x' does not exist", status=404)
    back = cloudpickle.loads(cloudpickle.dumps(exc))
    assert (type(back), back.status, back.message) == (EndpointRejected, 404, "model 'x' does not exist")
    assert EndpointRejected("plain").status == 0  # positive control: 404 did not come from the default


def test_line_problem_keeps_its_reason() -> None:
    from engine.history import LineProblem

    back = pickle.loads(pickle.dumps(LineProblem("line 3: no 'user'", "missing_field")))
    assert (back.reason, back.message, back.code) == ("missing_field", "line 3: no 'user'", "malformed_history")


@pytest.mark.parametrize("cls", TREE, ids=lambda c: c.__qualname__)
def test_every_error_keeps_a_stable_code(cls: type[DynmemError]) -> None:
    assert isinstance(cls.code, str) and cls.code
