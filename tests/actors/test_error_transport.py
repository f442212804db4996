"""An error raised inside a Ray actor reaches the caller with its class and every field."""

from __future__ import annotations

import pytest

from actors.launch import Ref
from actors.llm.endpoint import EndpointRejected
from engine.history import LineProblem

pytestmark = pytest.mark.ray


def test_error_fields_survive_the_actor_boundary(ray_session: None) -> None:
    import ray

    class Failing:  # defined here so that Ray ships the class by value
        def reject(self, status: int) -> None:
            raise EndpointRejected(f"refused with {status}", status=status)

        def bad_line(self) -> None:
            raise LineProblem("line 7: 'ts' is not a number", "bad_timestamp")

    handle = ray.remote(Failing).options(num_cpus=0).remote()  # type: ignore[attr-defined]
    ref = Ref(handle, remote=True)
    try:
        with pytest.raises(EndpointRejected) as info:
            ref.call(Failing.reject, 404)
        assert (type(info.value), info.value.status, info.value.message) == (EndpointRejected, 404, "refused with 404")
        with pytest.raises(LineProblem) as line:
            ref.call(Failing.bad_line)
        assert (line.value.reason, line.value.code) == ("bad_timestamp", "malformed_history")
    finally:
        ray.kill(handle)
