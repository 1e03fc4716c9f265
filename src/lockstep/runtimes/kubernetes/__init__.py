"""The Kubernetes runtime: workloads as Kubeflow Training Operator (and mpi-operator) jobs,
gang-scheduled by KAI Scheduler, Volcano or the default scheduler.

The translation (`render.render`) is pure: a stored workload and its replica plan become plain
manifests (`dict`s), with no `kubernetes` client and no I/O, so that it is the dry run too.
"""
