"""Per-framework wiring: the environment each Kubeflow operator injects into a pod, computed
from a replica plan and the address of every replica. Pure; used by the local runtime."""
