"""The documentation's code blocks — README.md and every page under docs/ — read as written, so
that the tests that run them and the test that checks every block is run or says why not
(tests/e2e/test_readme_snippets.py) read the same text."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.support.requests import REPOSITORY

README = REPOSITORY / "README.md"
DOCUMENTS = (README, *sorted((REPOSITORY / "docs").glob("*.md")))
"""Every page of the documentation: the README, the door, and the pages under docs/."""
LANGUAGES = ("sh", "python")
_FENCED = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def page(name: str) -> Path:
    """The documentation page `name`, relative to the repository (`README.md`, `docs/cli.md`)."""
    path = REPOSITORY / name
    assert path in DOCUMENTS, f"{name} is not a page of the documentation"
    return path


def code_block(name: str, after: str, language: str = "sh") -> str:
    """The first `language` block of the page `name` that follows the words `after` (however
    the page's lines are wrapped)."""
    text = page(name).read_text()
    words = r"\s+".join(re.escape(word) for word in after.split())
    match = re.search(words + rf".*?```{language}\n(.*?)```", text, re.DOTALL)
    assert match, f"{name} has no {language} block after {after!r}"
    return match.group(1)


def blocks() -> list[tuple[str, str]]:
    """Every `sh` and `python` block of every page, with the page it is on."""
    return [
        (path.relative_to(REPOSITORY).as_posix(), m.group(2))
        for path in DOCUMENTS
        for m in _FENCED.finditer(path.read_text())
        if m.group(1) in LANGUAGES
    ]


BLOCKS = {
    "SERVE": ("README.md", "from a checkout of this repository:", "sh"),
    "TEST": ("README.md", "scripts/serve        # installs lockstep into .venv", "sh"),
    "QUICK_START": ("README.md", "With the server from `scripts/serve` running, in another", "sh"),
    "INSTALL_FRAMEWORKS": ("README.md", "Install the CPU builds of the frameworks", "sh"),
    "EXAMPLES": ("README.md", "Then, in the shell of the quick start", "sh"),
    "CLI": ("docs/cli.md", "from the command line, with the habits of", "sh"),
    "NOTEBOOK": ("docs/cli.md", "A notebook runs the same way", "sh"),
    "SDK": ("docs/sdk.md", "# The Python SDK", "python"),
    "SDK_KINDS": ("docs/sdk.md", "gives the calls of the kind the", "python"),
    "NODES": ("docs/local-runtime.md", "`LOCKSTEP_NODES` overrides that, as JSON", "sh"),
    "KUBERNETES": ("docs/kubernetes.md", "only the settings change:", "sh"),
    "ADMINISTRATION": ("docs/security.md", "Whoever holds the store administers it directly", "sh"),
    "SECRETS": ("docs/security.md", "An operator manages them directly in the store:", "sh"),
    "PART_OF_THE_SUITE": ("docs/CONTRIBUTING.md", "keeps to SQLite", "sh"),
    "USERS": ("docs/users.md", "signs in with the one-time password and renews", "sh"),
    "IDENTITY_PROVIDER": ("docs/users.md", "A dotted name reaches into a claim", "sh"),
}
"""The blocks the tests name: each the first of its language on its page after its words. Read
when first asked for (`readme.CLI`), so that a block the pages lack fails only the tests that
read it."""


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
    """`script` run by bash in `cwd`, the quick start's server (`http://127.0.0.1:8080`) being
    `url`: `strict` as a script that stops at its first failure (`-euo pipefail`), else as lines
    pasted into a terminal; `env`: more environment variables."""
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
