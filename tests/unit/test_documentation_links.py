"""Every relative link of the documentation — README.md and every page under docs/ — leads to a
file that exists and, with an anchor, to a heading of that file, as GitHub names headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.readme import DOCUMENTS
from tests.support.requests import REPOSITORY

_FENCED = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[(?:[^\]]|\n)*?\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.MULTILINE)


def prose(text: str) -> str:
    """`text` without its code blocks, where a `#` begins a comment rather than a heading."""
    return _FENCED.sub("", text)


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of the Markdown file `path`: the heading's text
    (code spans and links as their text) in lower case, without punctuation but `-` and `_`,
    spaces made `-`; a repeated one numbered from `-1`."""
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(prose(path.read_text())):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def links(path: Path) -> list[str]:
    """The targets of the links and images of the page `path` that lead within the repository."""
    text = _CODE.sub("", prose(path.read_text()))
    return [target for target in _LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


PAGES = [path.relative_to(REPOSITORY).as_posix() for path in DOCUMENTS]


def test_the_documentation_has_its_pages() -> None:
    assert "README.md" in PAGES
    assert {
        "docs/architecture.md",
        "docs/api.md",
        "docs/local-runtime.md",
        "docs/sandbox.md",
        "docs/kubernetes.md",
        "docs/quotas.md",
        "docs/metrics.md",
        "docs/cli.md",
        "docs/sdk.md",
        "docs/console.md",
        "docs/operations.md",
        "docs/security.md",
        "docs/users.md",
        "docs/CONTRIBUTING.md",
    } <= set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_leads_to_a_file_and_a_heading(page: str) -> None:
    source = REPOSITORY / page
    broken = []
    for target in links(source):
        file, _, anchor = target.partition("#")
        destination = (source.parent / file).resolve() if file else source
        if not destination.is_file():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(destination):
            broken.append(f"{target}: no heading {anchor!r} in {destination.name}")
    assert not broken, f"{page}: {broken}"


def test_a_page_links_to_each_other_page_from_the_readme() -> None:
    """The README is the door: each page under docs/ is reached from it."""
    linked = {
        (REPOSITORY / target.partition("#")[0]).resolve()
        for target in links(REPOSITORY / "README.md")
    }
    unreached = [page for page in PAGES[1:] if (REPOSITORY / page).resolve() not in linked]
    assert not unreached, unreached


def test_the_anchors_are_those_github_makes(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# The `lockstep` command\n\n## Prometheus: `/metrics`\n\n"
        "```sh\n# a comment\n```\n\n## Placement, GPUs and preemption\n\n## Notes\n\n## Notes\n"
    )
    assert anchors(page) == {
        "the-lockstep-command",
        "prometheus-metrics",
        "placement-gpus-and-preemption",
        "notes",
        "notes-1",
    }
