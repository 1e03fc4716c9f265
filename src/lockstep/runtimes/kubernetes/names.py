"""Names of the objects rendered for a workload: `<job>-<suffix>`, kept within the 63
characters of a DNS label (a long name is cut and given a short hash so it stays unique).

Used by the storage, networking and render modules for every object other than the job.
"""

from __future__ import annotations

import hashlib

MAX_NAME_LENGTH = 63
_HASH_LENGTH = 8


def child_name(job: str, *suffixes: str) -> str:
    """`<job>-<suffix>-…`, or its first characters and a hash of the whole when longer than a
    DNS label allows."""
    name = "-".join((job, *suffixes))
    if len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_HASH_LENGTH]
    head = name[: MAX_NAME_LENGTH - _HASH_LENGTH - 1].rstrip("-.")
    return f"{head}-{digest}"
