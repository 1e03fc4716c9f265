"""A descriptor holding bytes for one of bwrap's `… FD` options (`--seccomp`, `--args`): a
close-on-exec memfd positioned at its start. The caller hands it to one child and closes its
own copy once that child runs; the read position is shared, so one descriptor serves one bwrap.
Used by seccomp.py (the filter) and environment.py (the pod's variables)."""

from __future__ import annotations

import os


def memory_file(name: str, data: bytes) -> int:
    """A memfd named `name` holding `data`, positioned at its start."""
    descriptor = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        os.lseek(descriptor, 0, os.SEEK_SET)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
