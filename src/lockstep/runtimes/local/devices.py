"""What a pod is told of the GPUs it was given, as the NVIDIA container runtime and Run:ai
tell a container: the visible devices, and how many GPUs it holds (a fraction for a share)."""

from __future__ import annotations

from lockstep.domain.cluster import Assignment


def gpu_environment(assignment: Assignment) -> dict[str, str]:
    """CUDA_VISIBLE_DEVICES lists the pod's devices (none: it sees no GPU, as a container
    without a GPU request sees none); RUNAI_NUM_OF_GPUS is 2 for two whole devices and 0.5
    for half of one; NODE_NAME is the node it was placed on."""
    devices = ",".join(str(index) for index in assignment.gpus)
    return {
        "CUDA_VISIBLE_DEVICES": devices,
        "NVIDIA_VISIBLE_DEVICES": devices or "void",
        "RUNAI_NUM_OF_GPUS": f"{assignment.gpu_amount.normalize():f}",
        "NODE_NAME": assignment.node,
    }
