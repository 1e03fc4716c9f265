"""`lockstep workspace`: submit workspaces (one interactive pod each, its ports exposed; see
single_pod.py), and list, describe (with where each port is reached), follow the logs of,
suspend, resume and delete them."""

from lockstep.cli.groups import command_group, described_only
from lockstep.cli.workloads import Kinds, add_commands

SUBMIT_HELP = "Submit a workspace: one pod for interactive work, its ports exposed."

app = command_group(no_args_is_help=True, help="Submit and manage workspaces.")


def prepare(words: list[str]) -> None:
    """Add `submit`: built when it is the command named (see cli/main.py), else described."""
    if words[:1] == ["submit"]:
        from lockstep.cli.single_pod import submit_workspace

        app.command("submit", help=SUBMIT_HELP)(submit_workspace)
    else:
        app.command("submit", help=SUBMIT_HELP)(described_only)


add_commands(app, Kinds(frozenset({"Workspace"}), "workspace"))
