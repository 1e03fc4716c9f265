"""Image names: which local environment an operator mapped to an image (its exact name first,
then its repository without tag or digest). Pure; read by the local runtime when it launches a
pod and by the API when it lists the images a workload runs without one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def mapped_environment(image: str, environments: Mapping[str, Path]) -> Path | None:
    """The environment an operator mapped to `image`: its exact name first, then its
    repository without tag or digest (`pytorch/pytorch` for `pytorch/pytorch:2.4-cuda12`)."""
    if image in environments:
        return environments[image]
    repository = image.split("@", 1)[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return environments.get(repository)
