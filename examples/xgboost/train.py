"""Distributed XGBoost training over every replica of an XGBoost distributed workload.

Runs unchanged under lockstep's local runtime and under the Kubeflow XGBoostJob operator: both
set MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK. The master and the workers all train: the
master (RANK 0) also starts XGBoost's tracker on MASTER_ADDR:MASTER_PORT for WORLD_SIZE
training processes, as the Kubeflow XGBoost examples do, and every process joins it through
`xgboost.collective.CommunicatorContext` (task id = RANK, so the collective's ranks follow the
operator's). Each process trains on its own shard (every WORLD_SIZE-th row, from its RANK) of
one deterministic synthetic data set; the histogram method aggregates the shards' statistics
across all processes every round, so every process must end with the same model.

The example checks that

- the collective's rank and world size are the operator's RANK and WORLD_SIZE,
- the model (its JSON, hashed) is the same on every process, exchanged through the collective,
- the model classifies a held-out set at least as well as ACCURACY_THRESHOLD,

prints one line naming the process and what it got, and exits 0 only when all three hold.

    submit with: distributedFramework "XGBoost", command "python", args "examples/xgboost/train.py"
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
from contextlib import ExitStack

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker

ROWS = 6000
FEATURES = 8
ROUNDS = 50
ACCURACY_THRESHOLD = 0.9
TRACKER_TIMEOUT_SECONDS = 120
"""How long the tracker waits for every process to join and to leave."""
CONNECT_RETRIES = 10
"""How often a process retries reaching the tracker, waiting two seconds longer each time (nearly
two minutes in all): the master may start its tracker well after the workers start."""


def dataset(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic, learnable binary labels: the sign of a fixed nonlinear function plus a
    little noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    score = x[:, 0] + 2 * x[:, 1] * x[:, 2] - x[:, 3] ** 2 + 1 + 0.1 * rng.normal(size=ROWS)
    return x, (score > 0).astype(np.float32)


def train(rank: int, world: int) -> tuple[xgb.Booster, float]:
    """Train on this process's shard; the model and its accuracy on the held-out set."""
    x, y = dataset(seed=0)
    shard = xgb.DMatrix(x[rank::world], label=y[rank::world])
    params = {
        "objective": "binary:logistic",
        "tree_method": "hist",
        "max_depth": 4,
        "eta": 0.3,
        "nthread": 1,
        "seed": 0,
    }
    booster = xgb.train(params, shard, num_boost_round=ROUNDS)
    x_test, y_test = dataset(seed=1)
    predicted = booster.predict(xgb.DMatrix(x_test)) > 0.5
    return booster, float(np.mean(predicted == y_test.astype(bool)))


def digest(booster: xgb.Booster) -> str:
    return hashlib.sha256(bytes(booster.save_raw(raw_format="json"))).hexdigest()


def main() -> int:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    tracker_host = socket.gethostbyname(os.environ["MASTER_ADDR"])
    tracker_port = int(os.environ["MASTER_PORT"])
    with ExitStack() as stack:
        tracker: RabitTracker | None = None
        if rank == 0:
            tracker = RabitTracker(
                n_workers=world,
                host_ip=tracker_host,
                port=tracker_port,
                sortby="task",
                timeout=TRACKER_TIMEOUT_SECONDS,
            )
            tracker.start()
            stack.callback(tracker.wait_for, TRACKER_TIMEOUT_SECONDS)
        args: dict[str, int | str | None] = {
            "dmlc_tracker_uri": tracker_host,
            "dmlc_tracker_port": tracker_port,
            "dmlc_task_id": f"{rank:06d}",
            "dmlc_timeout": TRACKER_TIMEOUT_SECONDS,
            "dmlc_retry": CONNECT_RETRIES,
        }
        if tracker is not None:
            args |= tracker.worker_args()
        with collective.CommunicatorContext(**args):
            joined = (collective.get_rank(), collective.get_world_size())
            booster, accuracy = train(rank, world)
            mine = digest(booster)
            digests = [collective.broadcast(mine, root) for root in range(world)]

    same = len(set(digests)) == 1
    host = os.environ.get("HOSTNAME", "?")
    print(
        f"rank {rank} of {world} on {host}: collective rank {joined[0]} of {joined[1]}, "
        f"model {mine[:16]} {'same on' if same else 'DIFFERS across'} all {world} ranks, "
        f"accuracy {accuracy:.3f} (threshold {ACCURACY_THRESHOLD})"
    )
    correct = joined == (rank, world) and same and accuracy >= ACCURACY_THRESHOLD
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
