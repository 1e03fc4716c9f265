"""TFJob wiring, exactly as the Kubeflow operator sets it (tensorflow.go, tfjob_controller.go
SetClusterSpec).

A distributed job (more than one replica in all) gets TF_CONFIG: the address of every task by
lower-case replica type, this pod's own type and index, and `"environment": "cloud"`. A job of a
single replica gets nothing. Called by the local runtime through the framework registry.
"""

from __future__ import annotations

import json

from lockstep.domain.plan import Replica, ReplicaPlan
from lockstep.frameworks.endpoints import Endpoints


def is_distributed(plan: ReplicaPlan) -> bool:
    """The operator's `isDistributed`: the job's replicas add up to anything but one."""
    return len(plan.replicas) != 1


def cluster_spec(plan: ReplicaPlan, endpoints: Endpoints) -> dict[str, list[str]]:
    """`host:port` of every task, by replica type (in the key order Go's encoder writes a map)
    and then by index."""
    cluster: dict[str, list[str]] = {}
    for replica in sorted(plan.replicas, key=lambda r: (r.role.value, r.index)):
        cluster.setdefault(replica.role.value, []).append(str(endpoints[replica.pod_name]))
    return dict(sorted(cluster.items()))


def tf_config(plan: ReplicaPlan, replica: Replica, endpoints: Endpoints) -> str:
    """TF_CONFIG as the operator marshals it: compact JSON, fields in the struct's order."""
    config = {
        "cluster": cluster_spec(plan, endpoints),
        "task": {"type": replica.role.value, "index": replica.index},
        "environment": "cloud",
    }
    return json.dumps(config, separators=(",", ":"))


def environment(plan: ReplicaPlan, replica: Replica, endpoints: Endpoints) -> dict[str, str]:
    if not is_distributed(plan):
        return {}
    return {"TF_CONFIG": tf_config(plan, replica, endpoints)}
