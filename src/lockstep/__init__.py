"""lockstep: a control plane for distributed training that speaks the Run:ai REST API.

`lockstep.Client` and `lockstep.AsyncClient` are the Python SDK (lockstep.sdk), imported when
first used so that `import lockstep` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lockstep.sdk import AsyncClient, Client

__version__ = "0.1.0"
__all__ = ["AsyncClient", "Client", "__version__"]


def __getattr__(name: str) -> Any:
    if name in {"Client", "AsyncClient"}:
        from lockstep import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module 'lockstep' has no attribute {name!r}")
