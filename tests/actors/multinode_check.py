"""The multi-node checks of issue 12, on a real three-node Ray cluster on this machine.

Run by ``tests/actors/test_multinode.py`` in a subprocess (the rest of the suite shares one
local Ray in its own process, and a driver holds one Ray connection at a time)::

    python -m tests.actors.multinode_check OUT_DIR

A head and two worker nodes (``ray.cluster_utils.Cluster``, one CPU each) are started; then

1. every actor kind runs where it must: files (logs, engines, the global engine, the index
   its engines fill) on the data node, model workers spread over more than one node;
2. a replay on the three nodes gives exactly the memories of a one-node (in-process) replay;
3. a worker node removed in the middle of a replay loses nothing and duplicates nothing;
4. ``dynmem replay --address`` (another process) joins this cluster rather than starting its own;
5. so does ``dynmem serve --address``, whose bridge runs on the node of the actors owning files,
   and a CLI recall goes through it.

Each check prints one JSON line; any failed check raises (exit status 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("DYNMEM_EMBEDDER", "hash")  # placement and exactness, not embedding quality

REPO = Path(__file__).resolve().parents[2]
HISTORY = REPO / "examples" / "shop-api-history.jsonl"


def report(check: str, **fields: Any) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def memories_of(pipe: Any, project: str) -> Counter[tuple[str, str, str]]:
    """Every memory of a project as (text, state, key), with multiplicity (a duplicate counts twice)."""
    return Counter((m.text, m.state.value, m.key or "") for m in pipe.memories(project))


def settings_for(workers: int) -> Any:
    from actors.config import load_settings

    base = load_settings()
    rt = base.runtime.model_copy(update={"extraction_workers": workers, "extraction_workers_max": workers})
    return base.model_copy(update={"runtime": rt})


def one_node_replay(data: Path) -> Counter[tuple[str, str, str]]:
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.replay import replay_file

    rt = Runtime(data, settings_for(1), use_ray=False)
    try:
        pipe = Pipeline(rt)
        replay_file(pipe, HISTORY)
        return memories_of(pipe, "shop-api")
    finally:
        rt.shutdown()


def main(out: Path) -> int:
    import ray
    from ray.cluster_utils import Cluster

    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.replay import replay_file

    expected = one_node_replay(out / "one-node")
    assert expected, "the one-node replay made no memory"
    report("one_node", memories=sum(expected.values()))

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    try:
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR")
        assert len([n for n in ray.nodes() if n["Alive"]]) == 3

        # 1 + 2: placement, and a three-node replay equals the one-node replay.
        rt = Runtime(out / "three-nodes", settings_for(4), use_ray=True)
        try:
            pipe = Pipeline(rt)
            rep = replay_file(pipe, HISTORY)
            assert rep.dead_jobs == 0, rep
            got = memories_of(pipe, "shop-api")
            here = ray.get_runtime_context().get_node_id()
            assert rt.data_node == here, (rt.data_node, here)
            owners = {"index": rt.index, "global_engine": rt.global_engine, "log": rt.log("shop-api"),
                      "engine": rt.engine("shop-api")}
            placed = {kind: rt.placement_of(ref) for kind, ref in owners.items()}
            assert all(node == rt.data_node for node in placed.values()), placed
            model_nodes = [rt.placement_of(ref) for ref in (*rt.extractors, rt.adjudicator, rt.investigator)]
            alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
            assert set(model_nodes) <= alive and len(set(model_nodes)) >= 2, model_nodes
            report("placement", data_node=rt.data_node, owners=placed, model_workers=model_nodes)
            assert got == expected, {"only_three_nodes": sorted(got - expected), "only_one_node": sorted(expected - got)}
            report("three_nodes_equal_one_node", memories=sum(got.values()))
        finally:
            rt.shutdown()

        # 3: a worker node that hosts model workers is removed in the middle of a replay.
        rt = Runtime(out / "node-lost", settings_for(4), use_ray=True)
        removed: list[str] = []
        try:
            pipe = Pipeline(rt)
            pipe.batch_jobs = 8  # several batches, so that the loss falls in the middle
            node_of = {rt.placement_of(ref): ref for ref in rt.extractors}
            victim = next(w for w in workers if w.node_id in node_of)
            done = [0]

            def progress(n: int) -> None:
                done[0] += n
                if not removed and done[0] >= 8:
                    cluster.remove_node(victim)  # its raylet and every worker process on it die
                    removed.append(victim.node_id)

            from actors import replay as replay_mod

            turns, _ = replay_mod.parse_history(replay_mod.read_lines(HISTORY), default_project=None, strict=False,
                                                now_ms=rt.clock.now_ms())
            base = rt.clock.now_ms() - len(turns)
            turns = [t if t.ts_ms is not None else t.model_copy(update={"ts_ms": base + i}) for i, t in enumerate(turns)]
            pipe.observe(turns)
            drained = pipe.drain("shop-api", progress=progress)
            assert removed, f"the replay finished before the node could be removed ({done[0]} jobs)"
            assert drained.dead == 0 and drained.jobs_failed == 0, drained
            got = memories_of(pipe, "shop-api")
            assert got == expected, {"only_after_loss": sorted(got - expected), "lost": sorted(expected - got)}
            survivors = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
            assert removed[0] not in survivors
            report("node_removed_mid_replay", removed=removed[0], jobs_before_removal=8, redone=pipe.redone,
                   deferred=pipe.deferred, memories=sum(got.values()))
        finally:
            rt.shutdown()

        # 4: `dynmem replay --address` joins this cluster (its actors appear in this cluster's table).
        before = {a["ActorID"] for a in ray._private.state.actors().values()}  # noqa: SLF001 - no public list without the dashboard
        env = {**os.environ, "RAY_ADDRESS": ""}
        proc = subprocess.run([sys.executable, "-m", "bridge.cli", "replay", str(HISTORY), "--address", cluster.address,
                               "--data-dir", str(out / "cli"), "--json"], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        doc = json.loads(proc.stdout)
        new = [a for a in ray._private.state.actors().values() if a["ActorID"] not in before]  # noqa: SLF001
        classes = Counter(a["ActorClassName"].rsplit(".", 1)[-1] for a in new)
        assert classes["EngineService"] >= 2 and classes["LogService"] >= 1 and classes["ExtractionService"] >= 1, classes
        cli_memories = sum(doc["projects"]["shop-api"].values())
        assert cli_memories == sum(expected.values()), (cli_memories, sum(expected.values()))
        report("cli_replay_joins_cluster", actors=dict(classes), memories=cli_memories)

        # 5: `dynmem serve --address` joins too; the bridge and every actor owning files share one node.
        before = {a["ActorID"] for a in ray._private.state.actors().values()}  # noqa: SLF001
        cli = [sys.executable, "-m", "bridge.cli"]
        data = ["--data-dir", str(out / "cli")]
        up = subprocess.run([*cli, "serve", "--detach", "--address", cluster.address, *data, "--json"], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stderr[-2000:]
        try:
            asked = subprocess.run([*cli, "recall", "which port does the API run on?", "--project", "shop-api", *data,
                                    "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
            assert asked.returncode == 0, asked.stderr[-2000:]
            assert json.loads(asked.stdout)["memories"], "the sidecar recalled nothing from the replayed project"
            live = [a for a in ray._private.state.actors().values()  # noqa: SLF001
                    if a["ActorID"] not in before and a["State"] == "ALIVE"]
            nodes = {a["ActorClassName"].rsplit(".", 1)[-1]: a["Address"]["NodeID"] for a in live}
            assert {"BridgeServer", "EngineService", "IndexService"} <= set(nodes), nodes
            owners = {nodes[k] for k in ("BridgeServer", "EngineService", "LogService", "IndexService") if k in nodes}
            assert len(owners) == 1, nodes
            report("cli_serve_joins_cluster", bridge_node=nodes["BridgeServer"], actors=sorted(nodes))
        finally:
            subprocess.run([*cli, "stop", *data], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    finally:
        ray.shutdown()
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    rc = main(target)
    report("done", seconds=round(time.monotonic() - t0, 1))
    raise SystemExit(rc)
