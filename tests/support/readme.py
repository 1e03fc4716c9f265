"""The README's code blocks, read as written, so that the tests that run them and the test that
checks every block is run (tests/e2e/test_readme_snippets.py) read the same text."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.support.requests import REPOSITORY

README = REPOSITORY / "README.md"
SECTIONS = ("## Set up", "## Quick start", "## The `lockstep` command", "## The Python SDK")
"""The sections a newcomer follows, in which every `sh` and `python` block must be run."""
LANGUAGES = ("sh", "python")
_FENCED = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def code_block(after: str, language: str = "sh") -> str:
    """The first `language` block of the README that follows the words `after`."""
    text = README.read_text()
    match = re.search(re.escape(after) + rf".*?```{language}\n(.*?)```", text, re.DOTALL)
    assert match, f"the README has no {language} block after {after!r}"
    return match.group(1)


def blocks(heading: str) -> list[str]:
    """Every `sh` and `python` block of the README's section `heading` (up to the next `## `)."""
    text = README.read_text()
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    return [m.group(2) for m in _FENCED.finditer(section) if m.group(1) in LANGUAGES]


BLOCKS = {
    "SERVE": ("from a checkout of this repository:", "sh"),
    "TEST": ("scripts/serve        # installs lockstep into .venv", "sh"),
    "QUICK_START": ("With the server from `scripts/serve` running, in another shell", "sh"),
    "INSTALL_FRAMEWORKS": ("Install the CPU builds of the frameworks", "sh"),
    "EXAMPLES": ("Then, in the shell of the quick start", "sh"),
    "CLI": ("The same, from the command line", "sh"),
    "NOTEBOOK": ("A notebook runs the same way", "sh"),
    "SDK": ("## The Python SDK", "python"),
    "SDK_KINDS": ("gives the calls of the kind the", "python"),
}
"""The blocks the tests name: each the first of its language after its words. Read when first
asked for (`readme.CLI`), so that a block the README lacks fails only the tests that read it."""


def __getattr__(name: str) -> str:
    if name not in BLOCKS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return code_block(*BLOCKS[name])


def set_up() -> str:
    """The quick start's first lines: the shell variables the other blocks use."""
    quick_start: str = __getattr__("QUICK_START")
    return quick_start.partition("\n# create:")[0] + "\n"


def shell(
    script: str,
    *,
    cwd: Path,
    url: str,
    timeout: float,
    strict: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`script` run by bash in `cwd`, the README's server (`http://127.0.0.1:8080`) being `url`:
    `strict` as a script that stops at its first failure (`-euo pipefail`), else as lines pasted
    into a terminal; `env`: more environment variables."""
    address = url.removeprefix("http://")
    script = script.replace("http://127.0.0.1:8080", url).replace("127.0.0.1:8080", address)
    return subprocess.run(
        ["bash", *(["-euo", "pipefail"] if strict else []), "-c", script],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
