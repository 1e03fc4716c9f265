"""What the web console's browser test checks on every page it visits, whatever the page
(tests/e2e/test_console.py): the browser logged no error and threw no exception; every quota
bar lies within its box; no memory figure is shown as a raw quantity (`24683792Ki`) or a bare
byte count; each department's section holds its projects; a workload page's header shows the
phase its body is drawn for.

Each check returns what is wrong, as sentences (empty: nothing), so that a test can poll it or
assert it with the page's own words in the message."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from selenium.webdriver import Chrome
from selenium.webdriver.remote.webdriver import WebDriver

RAW_QUANTITY = re.compile(r"\b\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|Pi|Ei)\b")
"""A Kubernetes binary quantity as the API writes it: the console shows human units instead."""

HUMAN_BYTES = re.compile(r"^\d+(?:\.\d+)? (?:B|KiB|MiB|GiB|TiB|PiB|EiB)$")
"""A byte count as the console shows it: `23.5 GiB`."""

WAITING_PHASES = frozenset({"Creating", "Pending"})
"""The phases in which a workload page may say why it waits."""


def browser_errors(browser: Chrome) -> list[str]:
    """What the browser logged as an error since the last call (console errors, uncaught
    exceptions and rejections, refused resources, invalid SVG attributes, CSP violations).
    Reading Chrome's log empties it, so each error is reported once."""
    entries: list[dict[str, Any]] = browser.get_log("browser")  # type: ignore[no-untyped-call]
    return [f"{e.get('source', '?')}: {e['message']}" for e in entries if e["level"] == "SEVERE"]


_BARS = """
const problems = [];
let bars = 0;
for (const svg of document.querySelectorAll("svg.quota")) {
  const label = svg.getAttribute("aria-label");
  const number = (element, name) => Number.parseFloat(element.getAttribute(name));
  const boxes = [...svg.querySelectorAll("rect.bar-back")];
  for (const bar of svg.querySelectorAll("rect:not(.bar-back)")) {
    bars += 1;
    const [x, y, width] = [number(bar, "x"), number(bar, "y"), number(bar, "width")];
    const box = boxes.find((b) => number(b, "y") === y);
    if (!box) {
      problems.push(`${label}: the ${bar.getAttribute("class")} bar has no box`);
      continue;
    }
    const [left, boxWidth] = [number(box, "x"), number(box, "width")];
    if (!(width >= 0 && width <= boxWidth && x >= left && x + width <= left + boxWidth)) {
      problems.push(`${label}: the ${bar.getAttribute("class")} bar is ${bar.getAttribute("width")}`
        + ` wide at x ${x}, outside its box (x ${left}, ${boxWidth} wide)`);
    }
  }
  const left = Math.min(...boxes.map((b) => number(b, "x")));
  const right = Math.max(...boxes.map((b) => number(b, "x") + number(b, "width")));
  for (const line of svg.querySelectorAll("line.bar-limit")) {
    const x = number(line, "x1");
    if (!(x >= left && x <= right)) {
      problems.push(`${label}: the limit line at x ${x} is outside [${left}, ${right}]`);
    }
  }
}
return [bars, problems];
"""


def bars_outside_their_box(browser: WebDriver) -> list[str]:
    """Every quota bar: 0 <= width <= its box's width, and inside the box; the limit line too."""
    _, problems = browser.execute_script(_BARS)
    return [str(p) for p in problems]


def bars_drawn(browser: WebDriver) -> int:
    count, _ = browser.execute_script(_BARS)
    return int(count)


_MEMORY_FIGURES = """
const figures = [];
for (const svg of document.querySelectorAll("svg.quota")) {
  if (!/· memory/.test(svg.getAttribute("aria-label"))) continue;
  const names = new Set(["deserved", "fair share", "allocated"]);
  for (const text of svg.querySelectorAll("text")) {
    const label = svg.getAttribute("aria-label");
    if (!names.has(text.textContent)) figures.push([label, text.textContent]);
  }
}
for (const cell of document.querySelectorAll("tr[data-node] td.memory")) {
  for (const part of cell.textContent.split(" of ")) figures.push(["node memory", part]);
}
return figures;
"""


_SHOWN_TEXT = """
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const parts = [];
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.parentElement.closest("pre, .message, script, style")) parts.push(node.textContent);
}
return parts.join(" ");
"""


def memory_without_units(browser: WebDriver) -> list[str]:
    """Raw quantities anywhere the console writes figures itself (not in what it shows as the
    API wrote it: specs, logs, messages), and memory figures (quota bars, node memory) not in
    human units."""
    body = str(browser.execute_script(_SHOWN_TEXT))
    problems = [f"a raw quantity: {raw!r}" for raw in RAW_QUANTITY.findall(body)]
    for where, figure in browser.execute_script(_MEMORY_FIGURES):
        if figure not in {"unlimited", "none"} and not HUMAN_BYTES.match(figure):
            problems.append(f"{where}: {figure!r} is not in human units")
    return problems


_DEPARTMENTS = """
return [...document.querySelectorAll("section.department")].map((section) => [
  section.querySelector("h2")?.textContent ?? "",
  [...section.querySelectorAll("[data-project]")].map((p) => p.getAttribute("data-project")),
]);
"""


def departments_missing_projects(
    browser: WebDriver,
    departments: Iterable[Mapping[str, Any]],
    projects: Iterable[Mapping[str, Any]],
) -> list[str]:
    """Each department (as the API lists them) that has projects: its section, titled
    `Department <name>`, shows every one of them."""
    shown = {str(title): list(names) for title, names in browser.execute_script(_DEPARTMENTS)}
    projects = list(projects)
    problems = []
    for department in departments:
        members = sorted(
            str(p["name"]) for p in projects if str(p.get("parentId")) == str(department["id"])
        )
        if not members:
            continue
        title = f"Department {department['name']}"
        if title not in shown:
            problems.append(f"no section {title!r} (sections: {sorted(shown)})")
        elif sorted(shown[title]) != members:
            problems.append(f"{title} shows projects {sorted(shown[title])}, not {members}")
    return problems


_WORKLOAD = """
const header = document.getElementById("workload-phase");
const page = document.getElementById("workload");
return [header ? header.textContent : null, page ? page.dataset.phase ?? null : null,
  document.getElementById("waiting") !== null];
"""


def workload_phase_shown(browser: WebDriver) -> tuple[str | None, list[str]]:
    """A workload page's header phase, and what disagrees with it: the phase its body is drawn
    for (`#workload[data-phase]`), and "Why it waits" shown in a phase that does not wait.
    Read in one script, so that a redraw cannot fall between the readings."""
    header, body, waits = browser.execute_script(_WORKLOAD)
    problems = []
    if header is None:
        return None, ["no workload page"]
    if body != header:
        problems.append(f"the header says {header} but the page is drawn for {body}")
    if waits and header not in WAITING_PHASES:
        problems.append(f'the header says {header} but the page shows "Why it waits"')
    return str(header), problems


def on_every_page(browser: Chrome) -> list[str]:
    """The checks that hold on any page."""
    return [
        *(f"browser error: {e}" for e in browser_errors(browser)),
        *bars_outside_their_box(browser),
        *memory_without_units(browser),
    ]
