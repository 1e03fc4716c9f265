"""The flags the workload commands share, declared once: those of every `submit` (what the pods
run and ask for, storage, waiting) and of the commands that name a workload."""

from pathlib import Path
from typing import Annotated

import typer

Project = Annotated[str | None, typer.Option("-p", "--project", help="Project name or id.")]
Output = Annotated[
    str | None, typer.Option("-o", "--output", help="json or yaml instead of a table.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON (same as -o json).")]

Name = Annotated[str, typer.Argument(help="The workload's name.")]
Command = Annotated[
    list[str] | None, typer.Argument(help="After --: the command and its arguments.")
]
Image = Annotated[str | None, typer.Option("-i", "--image", help="The image.")]
Environment = Annotated[
    list[str] | None, typer.Option("-e", "--environment", help="KEY=VALUE, repeatable.")
]
WorkingDir = Annotated[str | None, typer.Option("--working-dir")]
GpuDevices = Annotated[
    int | None, typer.Option("-g", "--gpu-devices-request", help="Whole GPUs per pod.")
]
GpuPortion = Annotated[
    float | None, typer.Option("--gpu-portion-request", help="A share of a GPU (0-1).")
]
GpuMemory = Annotated[str | None, typer.Option("--gpu-memory-request", help="GPU memory, e.g. 4G.")]
CpuCoreRequest = Annotated[float | None, typer.Option("--cpu-core-request")]
CpuCoreLimit = Annotated[float | None, typer.Option("--cpu-core-limit")]
CpuMemoryRequest = Annotated[str | None, typer.Option("--cpu-memory-request")]
CpuMemoryLimit = Annotated[str | None, typer.Option("--cpu-memory-limit")]
NodePools = Annotated[
    list[str] | None, typer.Option("--node-pools", help="In order of preference.")
]
Tolerations = Annotated[
    list[str] | None, typer.Option("--toleration", help="key[=value][:effect].")
]
BackoffLimit = Annotated[
    int | None, typer.Option("--backoff-limit", help="How often a failed pod runs again.")
]
Labels = Annotated[list[str] | None, typer.Option("--label", help="KEY=VALUE.")]
Annotations = Annotated[list[str] | None, typer.Option("--annotation", help="KEY=VALUE.")]
HostPaths = Annotated[
    list[str] | None,
    typer.Option("--host-path", help="path=…,mount=…[,mount-propagation=…][,readwrite]"),
]
ExistingPvcs = Annotated[
    list[str] | None, typer.Option("--existing-pvc", help="claimname=…,path=…[,readonly]")
]
NewPvcs = Annotated[
    list[str] | None,
    typer.Option(
        "--new-pvc",
        help="claimname=…,size=…,path=…[,storageclass=…][,accessmode-rwo|rom|rwm]"
        "[,readonly][,ephemeral]",
    ),
]
GitSyncs = Annotated[
    list[str] | None,
    typer.Option("--git-sync", help="source=…,path=…[,branch=…][,rev=…][,secret=…]"),
]
NamePrefix = Annotated[
    bool, typer.Option("--name-prefix", help="Use the name as a prefix (adds a suffix).")
]
RequestFile = Annotated[
    Path | None, typer.Option("-f", "--file", help="A request body to start from.")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print the request; submit nothing.")]
Wait = Annotated[bool, typer.Option("--wait", help="Show progress until it runs (or fails).")]
WaitForCompletion = Annotated[
    bool,
    typer.Option(
        "--wait-for-completion",
        help="Show progress until it completes; exit 1 with the reason if it fails.",
    ),
]
Follow = Annotated[
    bool,
    typer.Option(
        "--follow",
        help="With --wait or --wait-for-completion: once it runs, stream the logs and "
        "exit with its outcome.",
    ),
]
