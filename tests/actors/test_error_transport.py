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


def test_an_awaited_call_gets_the_same_values_and_errors_as_a_blocking_one(ray_session: None) -> None:
    """``Ref.result_async`` (the sidecar's recall on its event loop) unwraps Ray as ``Ref.result`` does."""
    import asyncio

    import ray

    from engine.errors import ActorDied

    class Answering:
        def double(self, x: int) -> int:
            return 2 * x

        def reject(self, status: int) -> None:
            raise EndpointRejected(f"refused with {status}", status=status)

    handle = ray.remote(Answering).options(num_cpus=0).remote()  # type: ignore[attr-defined]
    ref = Ref(handle, remote=True)

    async def scenario() -> None:
        assert await Ref.result_async(ref.submit(Answering.double, 21)) == 42  # positive control
        with pytest.raises(EndpointRejected) as info:
            await Ref.result_async(ref.submit(Answering.reject, 503))
        assert (info.value.status, info.value.message) == (503, "refused with 503")
        pending = ref.submit(Answering.double, 1)
        ray.get(pending.object_ref)
        ray.kill(handle, no_restart=True)  # returns before the actor is gone: calls may still be answered a moment
        died = None
        for _ in range(200):
            try:
                await Ref.result_async(ref.submit(Answering.double, 2))
            except ActorDied as exc:
                died = exc
                break
            await asyncio.sleep(0.05)
        assert isinstance(died, ActorDied)

    try:
        asyncio.run(scenario())
    finally:
        ray.kill(handle)
