"""The options every `submit` shares — the name and command, what the pods run and ask for,
storage, `-f`, `--dry-run`, waiting and output — declared once as `SubmitFlags`, and
`with_submit_flags`, which gives a command all of them, in one order around its own options,
and hands them to it as one `SubmitFlags`."""

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Concatenate, ParamSpec, get_type_hints

from lockstep.cli import flags

P = ParamSpec("P")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SubmitFlags:
    """The shared options' values. Each field's type is its option (or argument) as the command
    line declares it (see flags.py), and the fields' order is the order `--help` lists them in."""

    name: flags.Name
    command: flags.Command = None
    project: flags.Project = None
    image: flags.Image = None
    environment: flags.Environment = None
    working_dir: flags.WorkingDir = None
    gpu_devices_request: flags.GpuDevices = None
    gpu_portion_request: flags.GpuPortion = None
    gpu_memory_request: flags.GpuMemory = None
    cpu_core_request: flags.CpuCoreRequest = None
    cpu_core_limit: flags.CpuCoreLimit = None
    cpu_memory_request: flags.CpuMemoryRequest = None
    cpu_memory_limit: flags.CpuMemoryLimit = None
    node_pools: flags.NodePools = None
    toleration: flags.Tolerations = None
    label: flags.Labels = None
    annotation: flags.Annotations = None
    host_path: flags.HostPaths = None
    existing_pvc: flags.ExistingPvcs = None
    new_pvc: flags.NewPvcs = None
    git_sync: flags.GitSyncs = None
    name_prefix: flags.NamePrefix = False
    request_file: flags.RequestFile = None
    dry_run: flags.DryRun = False
    wait: flags.Wait = False
    wait_for_completion: flags.WaitForCompletion = False
    follow: flags.Follow = False
    output: flags.Output = None

    def pod_fields(
        self,
        *,
        project_id: str,
        cluster_id: str,
        storage: dict[str, list[dict[str, Any]]],
        base: dict[str, Any],
    ) -> dict[str, Any]:
        """The fields of `PodOptions` (requests.py) these flags give, with the project and
        cluster they name, the storage their flags ask for and `-f`'s body."""
        return {
            "name": self.name,
            "project_id": project_id,
            "cluster_id": cluster_id,
            "image": self.image,
            "command": self.command or (),
            "environment": self.environment or (),
            "working_dir": self.working_dir,
            "gpu_devices": self.gpu_devices_request,
            "gpu_portion": self.gpu_portion_request,
            "gpu_memory": self.gpu_memory_request,
            "cpu_core_request": self.cpu_core_request,
            "cpu_core_limit": self.cpu_core_limit,
            "cpu_memory_request": self.cpu_memory_request,
            "cpu_memory_limit": self.cpu_memory_limit,
            "node_pools": self.node_pools or (),
            "tolerations": self.toleration or (),
            "labels": self.label or (),
            "annotations": self.annotation or (),
            "name_prefix": self.name_prefix,
            "storage": storage,
            "base": base,
        }


FIRST_OWN_AFTER = "image"
"""Where a command's own options go unless told otherwise: right after `--image`."""


def shared_parameters() -> list[inspect.Parameter]:
    """The shared options as the parameters of a command, in their order."""
    hints = get_type_hints(SubmitFlags, include_extras=True)
    return [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty
            if field.default is dataclasses.MISSING
            else field.default,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(SubmitFlags)
    ]


def arranged(
    shared: list[inspect.Parameter],
    own: list[inspect.Parameter],
    after: Mapping[str, str],
) -> list[inspect.Parameter]:
    """`shared` with the `own` options placed among them: each own option that `after` names
    right after the shared one it maps to, the own options that follow it in `own` after it in
    turn; those before any named one after `--image`."""
    following: dict[str, list[inspect.Parameter]] = {}
    anchor = FIRST_OWN_AFTER
    for parameter in own:
        anchor = after.get(parameter.name, anchor)
        following.setdefault(anchor, []).append(parameter)
    unknown = set(following) - {parameter.name for parameter in shared}
    if unknown:
        raise ValueError(f"no shared submit flag {', '.join(sorted(unknown))}")
    placed: list[inspect.Parameter] = []
    for parameter in shared:
        placed += [parameter, *following.get(parameter.name, ())]
    return placed


def with_submit_flags(
    *, after: Mapping[str, str] | None = None
) -> Callable[[Callable[Concatenate[SubmitFlags, P], None]], Callable[..., None]]:
    """Give a command every shared option: the command takes a `SubmitFlags` first, then its own
    options (keyword-only), which the command line lists after `--image`, or each that `after`
    names (own option → shared option) and those following it after the shared one."""

    def decorate(command: Callable[Concatenate[SubmitFlags, P], None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        own = list(signature.parameters.values())[1:]
        shared = shared_parameters()
        names = {parameter.name for parameter in shared}
        clashes = names & {parameter.name for parameter in own}
        if clashes:
            raise ValueError(f"{', '.join(sorted(clashes))}: already a shared submit flag")

        run: Callable[..., None] = command  # called with the own options by name

        def submit(**values: Any) -> None:
            given = SubmitFlags(**{key: values.pop(key) for key in names if key in values})
            run(given, **values)

        parameters = arranged(shared, own, after or {})
        submit.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            parameters, return_annotation=None
        )
        submit.__annotations__ = {
            **{parameter.name: parameter.annotation for parameter in parameters},
            "return": None,
        }
        submit.__doc__ = command.__doc__
        submit.__name__ = command.__name__
        submit.__qualname__ = command.__qualname__
        submit.__module__ = command.__module__
        return submit

    return decorate
