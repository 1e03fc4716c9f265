"""Volumes the local runtime prepares on this machine before a pod starts."""

from __future__ import annotations

from lockstep.runtimes.base import PodStartError


class VolumeError(PodStartError):
    """A volume could not be prepared; the message is shown to the user.

    It never carries a credential: whoever raises it redacts them first.
    """
