"""One rank of `bench.launch`: prints `ready <rank>` the moment its interpreter runs it (before
torch is imported, which takes seconds), then runs examples/pytorch/allreduce.py unchanged.

The `ready` line marks when the launcher had the process running; the rest is the example's
own work, the same under every launcher.
"""

import os
import runpy
import sys
from pathlib import Path

# One write, so that ranks sharing a pipe (under torchrun) never interleave within the line.
os.write(1, f"ready {os.environ.get('RANK', '?')}\n".encode())

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "pytorch" / "allreduce.py"
# Run as a script, this file puts bench/ first on the path, where bench/http.py would hide the
# standard library's http (which torch imports); the example runs with its own directory there.
sys.path[0] = str(EXAMPLE.parent)
runpy.run_path(str(EXAMPLE), run_name="__main__")
