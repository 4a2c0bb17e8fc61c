"""Two Ray "nodes" on one machine, both on 127.0.0.1, feeding one self-play run.

    python benchmarks/ray_two_nodes.py [--games 8]

Ray 2.60's ``ray start --address 127.0.0.1:PORT --node-ip-address 127.0.0.1`` replaces
127.0.0.1 by the machine's own address for a joining node (and Ray's single-node mode,
which keeps servers on the loopback, refuses a second node), so this uses Ray's own
multi-node-on-one-machine harness, ``ray.cluster_utils.Cluster``, with each node's address
set to 127.0.0.1 and one CPU each. Two actors are spread over the two nodes; the script
prints the nodes, every listening socket of the cluster that is not on the loopback (there
should be none) and the Ray node of every actor whose chunks reached the run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # before ray is imported: see backends

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=8)
    args = ap.parse_args()

    import ray
    from ray.cluster_utils import Cluster

    import psutil  # Ray's own copy (ray/thirdparty_files), on the path once ray is imported

    from zerochess.neural.api import shipped_network_path
    from zerochess.train.selfplay.config import SelfPlayConfig
    from zerochess.train.selfplay.loop import SelfPlayRun

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"})
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    try:
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
        nodes = [(n["NodeID"][:8], n["NodeManagerAddress"], n["Resources"].get("CPU"))
                 for n in ray.nodes() if n["Alive"]]
        print("nodes (id, address, CPUs):", nodes)
        family = {p.pid for p in psutil.Process().children(recursive=True)}
        outside = [(c.laddr.ip, c.laddr.port) for c in psutil.net_connections(kind="inet")
                   if c.status == psutil.CONN_LISTEN and c.pid in family
                   and c.laddr.ip not in ("127.0.0.1", "::ffff:127.0.0.1", "::1")]
        print("listening outside the loopback:", outside)
        cfg = SelfPlayConfig(iterations=1, games_per_iteration=args.games, workers=2,
                             threads=1, backend="ray", device="cpu", games_per_worker=4,
                             games_per_shard=2, full_search_nodes=16, fast_search_nodes=4,
                             max_game_plies=40, min_replay=10**9, steps_per_iteration=0)
        with tempfile.TemporaryDirectory() as tmp:
            SelfPlayRun(cfg, Path(tmp) / "run", shipped_network_path()).run()
            rec = next(json.loads(l) for l in (Path(tmp) / "run" / "selfplay_metrics.jsonl")
                       .read_text().splitlines() if '"actors"' in l)
            shards = sorted(p.name for p in (Path(tmp) / "run" / "games").iterdir())
        print("actors' nodes:", rec["hosts"])
        print(f"games {rec['games_in_iteration']}, positions {rec['positions_in_iteration']}, "
              f"shards {shards}")
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
