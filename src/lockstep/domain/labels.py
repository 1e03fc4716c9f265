"""The names lockstep gives what it makes on a Kubernetes cluster and that others read back:
the labels that tie an object to its workload and project, and the prefix of a department's
scheduler queue. The Kubernetes runtime writes them; the metrics services find lockstep's
pods and queues in the cluster's Prometheus by them."""

from __future__ import annotations

WORKLOAD_ID = "lockstep.io/workload-id"
PROJECT_ID = "lockstep.io/project-id"
DEPARTMENT_QUEUE_PREFIX = "department."
"""A department's queue is named `department.<name>` (a project's queue is the project's name)."""
