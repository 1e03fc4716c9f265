"""A node pool: a named set of the cluster's nodes that quotas are given in.

A node belongs to a pool when its `pool` (the local runtime's `LOCKSTEP_NODES` entry, or on
Kubernetes the value of the node-pool label) is the pool's name, or when it carries the pool's
`labelKey` with the value `labelValue`. The `default` pool always exists and cannot be deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lockstep.domain.cluster import Node

DEFAULT_POOL = "default"
POOL_LABEL_KEY = "lockstep.io/node-pool"
"""The label key of a pool created implicitly (seen on nodes, never created by a caller)."""


@dataclass(frozen=True, slots=True)
class NodePool:
    id: str
    name: str
    cluster_id: str
    label_key: str
    label_value: str
    created_by: str
    updated_by: str
    created_at: datetime
    updated_at: datetime

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_POOL

    def holds(self, node: Node) -> bool:
        """Whether `node` belongs to this pool."""
        return node.pool == self.name or node.labels.get(self.label_key) == self.label_value
