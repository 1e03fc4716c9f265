"""The web console in a real headless Chromium (Debian's chromium and chromedriver, driven by
Selenium), against a real `lockstep serve` with virtual GPU nodes: sign-in through the form,
a workload submitted through the API appearing live, its page with logs that grow, suspending
it from the page, a waiting workload's reason and queue position, submitting from the form
after its dry run, a restart's exit code and next try; and the console's security: a strict
Content-Security-Policy, the token in sessionStorage only (no cookie, never in a URL), every API
call the pages make carrying it.

On every page it visits the test fails on any error the browser logs (an uncaught exception, a
console error, an invalid SVG attribute) and checks what is drawn (tests/support/
console_checks.py): every quota bar within its box, memory in human units, each department's
projects under it, a workload page's header phase the one its body is drawn for.

Each page is photographed at 1280 by 800 into `SCREENSHOTS` (not committed)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select

from lockstep.domain.clock import iso, utc_now
from lockstep.domain.workload import Event, EventType, WorkloadUpdate
from lockstep.store.database import Database
from tests.conftest import running
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.console_checks import (
    bars_drawn,
    browser_errors,
    departments_missing_projects,
    on_every_page,
    workload_phase_shown,
)
from tests.support.requests import distributed, python, single_pod, sleeping
from tests.support.server import LiveServer

SCREENSHOTS = Path(__file__).parent / "console-screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 60.0
CHATTY = python(
    "import time\nfor i in range(100000):\n    print('line', i, flush=True)\n    time.sleep(0.2)"
)


NODE_MEMORY = "24683792Ki"  # as a machine's /proc/meminfo gives it: 23.5 GiB
GPU_MEMORY = "81559Mi"  # 79.6 GiB
BACKOFF = re.compile(
    r"^pod (?P<pod>\S+) exited with code (?P<code>-?\d+); restart (?P<restart>\d+) of "
    r"(?P<limit>\d+) in (?P<seconds>[\d.]+) s \(at (?P<at>[^)\s]+)\)$"
)
"""A restart's event message, as the server records it (reason BackOff)."""


def _serve(tmp_path: Path, sqlite_url: str, **settings: str) -> LiveServer:
    """One virtual node of 4 GPUs, its memory and its GPUs' as a machine reports them."""
    nodes = [
        {
            "name": "gpu-0",
            "cpu_cores": 32,
            "memory": NODE_MEMORY,
            "gpus": 4,
            "gpu_memory": GPU_MEMORY,
        }
    ]
    return LiveServer(
        tmp_path / "data", sqlite_url, settings={"NODES": json.dumps(nodes), **settings}
    )


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    with running(_serve(tmp_path, sqlite_url)) as live:
        yield live


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--window-size=1280,800"):
        options.add_argument(argument)
    options.add_argument("--disable-dev-shm-usage")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        yield driver
        # Whatever the last page did after its checks.
        assert not browser_errors(driver), "the browser logged errors after the last check"
    finally:
        driver.quit()


def photograph(browser: WebDriver, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def checked(browser: webdriver.Chrome, name: str, *checks: Callable[[], list[str]]) -> None:
    """The page as drawn now: no error logged since the last check, every bar within its box,
    memory in human units, and what `checks` say; then its photograph."""
    problems = [*on_every_page(browser), *(p for check in checks for p in check())]
    assert not problems, f"page {name}:\n" + "\n".join(problems) + f"\n{_page_text(browser)}"
    photograph(browser, name)


def agreeing(browser: WebDriver) -> Callable[[], list[str]]:
    """A workload page's check: its header's phase is the one its body is drawn for."""
    return lambda: workload_phase_shown(browser)[1]


def follow_phase(browser: WebDriver, wanted: set[str], what: str) -> str:
    """Watch a workload page until its header shows one of `wanted`; at each look the header
    and the body agree (read together, so that a redraw cannot fall between)."""

    def look() -> str | None:
        phase, problems = workload_phase_shown(browser)
        if phase is None:
            return None  # the page is still loading
        assert not problems, f"{what}: " + "; ".join(problems)
        return phase if phase in wanted else None

    found: str = poll(look, timeout=WAIT, what=lambda: f"{what}; page:\n{_page_text(browser)}")
    return found


def until(browser: WebDriver, check: Callable[[], Any], what: str) -> Any:
    def attempt() -> Any:
        try:
            return check() or None
        except Exception:  # an element replaced while read: read again
            return None

    return poll(attempt, timeout=WAIT, what=lambda: f"{what}; page:\n{_page_text(browser)}")


def _page_text(browser: WebDriver) -> str:
    """The status line, then the page (its first 2000 characters)."""
    try:
        status = browser.find_element(By.ID, "status").text
        return f"status: {status}\n" + str(browser.find_element(By.ID, "view").text)[:2000]
    except Exception:
        return "(unreadable)"


def element(browser: WebDriver, css: str) -> WebElement:
    found: WebElement = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, css), css)
    return found


def sign_in(browser: webdriver.Chrome, server: LiveServer) -> None:
    """Sign in as the administrator application (the form's second choice)."""
    browser.get(f"{server.url}/")
    element(browser, "#as-application").click()
    element(browser, "#client-id").send_keys(ADMIN_ID)
    secret = browser.find_element(By.CSS_SELECTOR, "#client-secret")
    checked(browser, "sign-in")
    secret.send_keys(ADMIN_SECRET, Keys.ENTER)
    element(browser, "#workload-rows")


def row(browser: WebDriver, workload_id: str) -> WebElement:
    return element(browser, f'tr[data-id="{workload_id}"]')


def _default_pool(api: Api) -> dict[str, str]:
    pools = api.get("/api/v1/node-pools").json()["nodepools"]
    pool = next(p for p in pools if p["name"] == "default")
    return {"id": str(pool["id"]), "name": "default"}


def project(
    api: Api,
    name: str,
    *,
    gpu_limit: float,
    gpu_deserved: float = 0,
    department: str | None = None,
    **more: dict[str, Any],
) -> str:
    quota = {"gpu": {"deserved": gpu_deserved, "limit": gpu_limit}, **more}
    body: dict[str, Any] = {
        "name": name,
        "clusterId": api.cluster_id(),
        "resources": [{"nodePool": _default_pool(api), **quota}],
    }
    if department is not None:
        body["parentId"] = department
    response = api.post("/api/v1/org-unit/projects", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def department(api: Api, name: str, **quota: dict[str, Any]) -> str:
    body = {
        "name": name,
        "clusterId": api.cluster_id(),
        "resources": [{"nodePool": _default_pool(api), **quota}],
    }
    response = api.post("/api/v1/org-unit/departments", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def listed(api: Api, path: str, key: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = api.get(path).json()[key]
    return items


def test_the_console_shows_and_drives_workloads_live(
    server: LiveServer, browser: webdriver.Chrome
) -> None:
    api = server.api()
    sign_in(browser, server)

    # A workload submitted through the API appears, and runs, without a reload.
    chatty = api.create(distributed(api.cluster_id(), name="chatty", workers=1, args=CHATTY))
    chatty_id = chatty["workloadId"]
    until(
        browser,
        lambda: row(browser, chatty_id).get_attribute("data-phase") == "Running",
        "chatty running in the list",
    )
    assert "1 / 2" in row(browser, chatty_id).text or "2 / 2" in row(browser, chatty_id).text
    checked(browser, "workloads")

    # Its page: logs that grow as the pod writes them.
    row(browser, chatty_id).find_element(By.LINK_TEXT, "chatty").click()
    logs = element(browser, "#logs")
    until(browser, lambda: "line 2" in logs.text, "the first lines of its logs")
    seen = len(logs.text)
    until(browser, lambda: len(logs.text) > seen + 20, "its logs to grow")
    element(browser, "#no-samples")  # the metrics endpoint answers nothing yet
    assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#timeline li")]
    checked(browser, "workload", agreeing(browser))

    # Suspended from the page: the phase shown follows, and the page with it.
    element(browser, "#workload-actions .suspend").click()
    assert follow_phase(browser, {"Stopped"}, "the phase to show Stopped") == "Stopped"
    assert api.workload(chatty_id)["phase"] == "Stopped"
    until(browser, lambda: element(browser, "#workload-actions .resume"), "a Resume button")
    checked(browser, "stopped-workload", agreeing(browser))

    # Quotas of every kind: unlimited (the default project), none deserved with a limit and
    # more allocated than deserved (capped), a department's own, memory in MB.
    research = department(
        api,
        "research",
        gpu={"deserved": 2, "limit": 4},
        cpu={"deserved": 8000, "limit": -1},
        memory={"deserved": 8000, "limit": 16000, "units": "MB"},
    )
    project(
        api,
        "studies",
        gpu_limit=-1,
        gpu_deserved=1,
        department=research,
        memory={"deserved": 4000, "limit": -1, "units": "MB"},
    )

    # A waiting workload: its reason and its place in the queue.
    capped = project(api, "capped", gpu_limit=4)
    two_gpus_a_pod = {"gpuDevicesRequest": 2}
    first = api.create(
        sleeping(
            api.cluster_id(), name="first", project_id=capped, workers=1, compute=two_gpus_a_pod
        )
    )
    first_id = first["workloadId"]
    api.wait_for(first_id, ["Running"])
    second = api.create(
        sleeping(
            api.cluster_id(), name="second", project_id=capped, workers=1, compute=two_gpus_a_pod
        )
    )
    second_id = second["workloadId"]
    poll(
        lambda: True if api.workload(second_id).get("phaseReason") else None,
        timeout=WAIT,
        what="the second workload to be held with a reason",
    )
    browser.get(f"{server.url}/console/#/workloads/{second_id}")
    until(browser, lambda: "OverLimit" in element(browser, "#phase-reason").text, "its reason")
    assert "1" in element(browser, "#queue-position").text
    checked(browser, "waiting-workload", agreeing(browser))

    browser.get(f"{server.url}/console/#/projects")
    queue = element(browser, '[data-project="capped"]')
    until(browser, lambda: "second" in queue.text and "OverLimit" in queue.text, "its queue")
    assert queue.find_elements(By.CSS_SELECTOR, "svg.quota")
    assert bars_drawn(browser) > 0
    departments = listed(api, "/api/v1/org-unit/departments", "departments")
    projects = listed(api, "/api/v1/org-unit/projects", "projects")
    checked(
        browser,
        "projects",
        lambda: departments_missing_projects(browser, departments, projects),
    )
    research_memory = element(browser, '[data-department="research"] svg[aria-label*="memory"]')
    assert "7.5 GiB" in research_memory.text  # 8000 MB deserved
    assert "default · gpu" in element(browser, '[data-project="default"]').text
    assert "unlimited" in element(browser, '[data-project="default"] svg.quota').text

    browser.get(f"{server.url}/console/#/nodes")
    node = element(browser, '[data-node="gpu-0"]')
    until(browser, lambda: "GPU 3" in node.text, "the node's GPUs one by one")
    checked(browser, "nodes")
    memory = node.find_element(By.CSS_SELECTOR, "td.memory").text
    assert memory.endswith(" of 23.5 GiB"), memory
    assert "32 cores" in node.find_element(By.CSS_SELECTOR, "td.cpu").text
    assert "79.6 GiB" in node.text  # each GPU's memory
    assert "23.5 GiB" in element(browser, '[data-pool="default"]').text

    # The waiting workload admitted while its page is open: the header and the page below it
    # change together (no "Why it waits" under Running).
    browser.get(f"{server.url}/console/#/workloads/{second_id}")
    assert follow_phase(browser, {"Pending"}, "the second workload's page, waiting") == "Pending"
    assert browser.find_elements(By.CSS_SELECTOR, "#waiting")
    assert api.post(f"/api/v1/workloads/distributed/{first_id}/suspend").status_code < 300
    follow_phase(browser, {"Running"}, "the second workload admitted, on its page")
    assert not browser.find_elements(By.CSS_SELECTOR, "#waiting")
    checked(browser, "admitted-workload", agreeing(browser))

    # Submitted from the form, after its dry run.
    browser.get(f"{server.url}/console/#/submit")
    Select(element(browser, "#kind")).select_by_value("Training")
    element(browser, "#name").send_keys("from-the-form")
    element(browser, "#command").send_keys("python3")
    element(browser, "#args").send_keys("-c pass")
    submit = element(browser, "#submit")
    assert not submit.is_enabled()
    element(browser, "#dry-run-button").click()
    until(browser, lambda: element(browser, "#dry-run").text != "", "the dry run shown")
    until(browser, submit.is_enabled, "submission allowed after the dry run")
    checked(browser, "submit")
    submit.click()

    def submitted() -> dict[str, Any] | None:
        listed = api.get("/api/v1/workloads", params={"filterBy": "name==from-the-form"})
        items: list[dict[str, Any]] = listed.json()["workloads"]
        return items[0] if items else None

    created = poll(submitted, timeout=WAIT, what="the form's workload to be stored")
    assert created["type"] == "Training"
    until(browser, lambda: "from-the-form" in element(browser, "#summary").text, "its page")
    # Right after the submit: whatever phases it goes through, the page follows as one.
    follow_phase(browser, {"Completed"}, "the form's workload to complete, on its page")
    checked(browser, "submitted-workload", agreeing(browser))

    # Filtered as the list API filters: by type, then by project.
    browser.get(f"{server.url}/console/#/workloads")
    row(browser, chatty_id)
    Select(element(browser, "#filter-type")).select_by_value("Training")

    def names() -> list[str]:
        return [
            r.text.split("\n")[0] for r in browser.find_elements(By.CSS_SELECTOR, "tr[data-id]")
        ]

    until(browser, lambda: names() and all("from-the-form" in n for n in names()), "trainings only")
    Select(element(browser, "#filter-type")).select_by_value("")
    element(browser, "#filter-project").send_keys("capped", Keys.TAB)
    until(
        browser,
        lambda: sorted(n.split()[0] for n in names()) == ["first", "second"],
        "the capped project's workloads only",
    )
    checked(browser, "filtered-workloads")

    _the_token_travels_only_in_headers(browser, server)


def _the_token_travels_only_in_headers(browser: webdriver.Chrome, server: LiveServer) -> None:
    token = browser.execute_script("return sessionStorage.getItem('lockstep.token')")
    assert token
    assert browser.get_cookies() == []
    entries: list[dict[str, Any]] = browser.get_log("performance")  # type: ignore[no-untyped-call]
    requests = [
        json.loads(entry["message"])["message"]["params"]["request"]
        for entry in entries
        if json.loads(entry["message"])["message"]["method"] == "Network.requestWillBeSent"
    ]
    api_calls = [r for r in requests if r["url"].startswith(f"{server.url}/api/")]
    assert len(api_calls) > 10
    for request in api_calls:
        assert token not in request["url"]
        if request["url"] != f"{server.url}/api/v1/token":
            assert request["headers"].get("Authorization") == f"Bearer {token}", request["url"]
    for request in requests:
        assert "Cookie" not in request["headers"]
    # No page broke the policy: a refusal is an error the browser logs, which `checked` fails
    # on at each page.
    assert not browser_errors(browser)


def test_the_console_is_served_with_a_strict_policy_and_needs_no_token_to_load(
    live_server: LiveServer,
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30.0) as client:
        assert client.get("/").headers["location"] == "/console/"
        for path in ("/console/", "/console/app.js", "/console/console.css"):
            response = client.get(path)
            assert response.status_code == 200, path
            policy = response.headers["content-security-policy"]
            directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
            assert directives["default-src"] == "'self'"
            assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
            assert directives["frame-ancestors"] == "'none'"
            assert "unsafe" not in policy
            assert response.headers["x-content-type-options"] == "nosniff"
            assert "set-cookie" not in response.headers
        page = client.get("/console/").text
        assert "<script>" not in page and "style=" not in page and "http" not in page
        assert client.get("/console/nothing.js").status_code == 404
        refused = client.get("/api/v1/workloads")
        assert refused.status_code == 401 and refused.json()["code"] == 401


def test_a_workloads_metrics_are_drawn_as_charts(
    server: LiveServer, browser: webdriver.Chrome
) -> None:
    """Needs `GET /api/v1/workloads/{id}/metrics` (the contract's measurements)."""
    api = server.api()
    busy = python("while True:\n    sum(range(100000))")
    created = api.create(distributed(api.cluster_id(), name="busy", workers=1, args=busy))
    workload_id = created["workloadId"]
    api.wait_for(workload_id, ["Running"])

    def sampled() -> list[dict[str, Any]] | None:
        now = datetime.now(UTC)
        window = {"start": iso(now - timedelta(minutes=10)), "end": iso(now)}
        response = api.get(
            f"/api/v1/workloads/{workload_id}/metrics",
            params={"metricType": "CPU_USAGE_CORES", "numberOfSamples": "20", **window},
        )
        if response.status_code != 200:
            return None
        measurements: list[dict[str, Any]] = response.json()["measurements"]
        return measurements if any(m["values"] for m in measurements) else None

    poll(sampled, timeout=WAIT, what="CPU samples of the busy workload")
    sign_in(browser, server)
    browser.get(f"{server.url}/console/#/workloads/{workload_id}")
    chart = element(browser, "#metrics svg.metric-chart")
    assert "CPU_USAGE_CORES" in str(chart.get_attribute("aria-label"))
    path = chart.find_element(By.CSS_SELECTOR, "path.chart-line").get_attribute("d")
    assert str(path).startswith("M")
    assert not browser.find_elements(By.CSS_SELECTOR, "#no-samples")
    checked(browser, "metrics", agreeing(browser))


def _clock(at: str) -> str:
    """An event's UTC time as the console shows it: the browser's local time of day (the
    browser runs on this machine, in its time zone)."""
    return datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone().strftime("%H:%M:%S")


def _restart_line(match: re.Match[str]) -> str:
    """What the workload page shows of a BackOff event, but the countdown."""
    return (
        f"Restarting: pod {match['pod']} exited with code {match['code']}; "
        f"restart {match['restart']} of {match['limit']} at {_clock(match['at'])}"
    )


def _countdown(browser: WebDriver) -> int | None:
    """The seconds to the next try the restart line counts down, None without one."""
    found = re.search(r"\(in (\d+) s\)$", element(browser, "#restarting").text)
    return None if found is None else int(found[1])


def record_backoff(server: LiveServer, workload_id: str, message: str) -> None:
    """A BackOff event recorded for the workload as the reconciler records one (in its store,
    in one write that moves the workload's `updated_at`, so the change stream tells of it)."""
    assert server.database_url is not None
    database = Database(server.database_url)
    try:
        with database.write() as unit:
            workload = unit.workloads.get(workload_id)
            assert workload is not None
            event = Event(
                id=str(uuid.uuid4()),
                workload_id=workload_id,
                created_at=utc_now(),
                type=EventType.WARNING,
                reason="BackOff",
                message=message,
                object_kind="Pod",
                object_name=f"{workload.name}-0",
            )
            unit.workloads.apply(workload, WorkloadUpdate(events=[event]), utc_now())
    finally:
        database.engine.dispose()


def test_a_restart_is_shown_with_its_exit_code_and_next_try(
    server: LiveServer, browser: webdriver.Chrome
) -> None:
    """The page of a workload whose events include a restart (a BackOff event), recorded while
    the page is open: the newest one, near the phase, with a countdown to the next try; gone
    once the workload is stopped."""
    api = server.api()
    body = single_pod(api.cluster_id(), name="flaky", args=python("import time; time.sleep(600)"))
    workload_id = api.create(body, kind="trainings")["workloadId"]
    api.wait_for(workload_id, ["Running"])
    sign_in(browser, server)
    browser.get(f"{server.url}/console/#/workloads/{workload_id}")
    follow_phase(browser, {"Running"}, "its page, running")
    assert not browser.find_elements(By.CSS_SELECTOR, "#restarting")

    for restart, seconds in ((1, 2), (2, 40)):
        at = (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        record_backoff(
            server,
            workload_id,
            f"pod flaky-0 exited with code 127; restart {restart} of 6 in {seconds} s (at {at})",
        )
    line = (
        "Restarting: pod flaky-0 exited with code 127; restart 2 of 6 at "
        + _clock(at)  # the newest
    )
    shown = until(
        browser,
        lambda: line in element(browser, "#restarting").text and _countdown(browser),
        f"the newest restart shown: {line!r}",
    )
    assert 0 < shown <= 40
    assert element(browser, "#restarting time").get_attribute("datetime") == at
    until(browser, lambda: (_countdown(browser) or shown) < shown, "the countdown to go down")
    checked(browser, "restarting-workload", agreeing(browser))

    assert api.post(f"/api/v1/workloads/trainings/{workload_id}/suspend").status_code < 300
    follow_phase(browser, {"Stopped"}, "the workload stopped, on its page")
    assert not browser.find_elements(By.CSS_SELECTOR, "#restarting")
    checked(browser, "restarts-stopped", agreeing(browser))


@pytest.fixture
def slow_restarts(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """Restarts 3 s apart, then 6, 12…: time to see each on the page."""
    with running(_serve(tmp_path, sqlite_url, RESTART_BACKOFF_SECONDS="3")) as live:
        yield live


def test_the_servers_restarts_are_shown_as_it_records_them(
    slow_restarts: LiveServer, browser: webdriver.Chrome
) -> None:
    """A training that keeps failing: the page shows the newest restart the server recorded
    (its BackOff event: the pod, its exit code, which restart of how many, when) and each
    pod's restarts and exit code as the pods API gives them."""
    api = slow_restarts.api()
    body = single_pod(
        api.cluster_id(), name="crashing", args=python("import sys; sys.exit(127)"), backoffLimit=6
    )
    workload_id = api.create(body, kind="trainings")["workloadId"]
    sign_in(browser, slow_restarts)
    browser.get(f"{slow_restarts.url}/console/#/workloads/{workload_id}")
    element(browser, "#workload-phase")

    def newest_backoff() -> re.Match[str] | None:
        events = api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
        backoffs = [e for e in events if e["reason"] == "BackOff"]
        if not backoffs:
            return None
        newest = max(backoffs, key=lambda e: str(e["createdAt"]))
        assert newest["type"] == "Warning", newest
        match = BACKOFF.match(newest["message"])
        assert match is not None, f"a BackOff event's message: {newest['message']!r}"
        return match

    poll(
        newest_backoff,
        timeout=WAIT,
        what="the server to record a BackOff event for a restart (reason BackOff, type "
        "Warning, 'pod <name> exited with code <n>; restart <k> of <limit> in <s> s (at <time>)')",
    )

    def page_shows_the_newest() -> re.Match[str] | None:
        match = newest_backoff()
        assert match is not None
        shown = browser.find_elements(By.CSS_SELECTOR, "#restarting")
        return match if shown and shown[0].text.startswith(_restart_line(match)) else None

    match = until(browser, page_shows_the_newest, "the newest restart on the page")
    assert match["pod"] == "crashing-0" and match["code"] == "127" and match["limit"] == "6"

    def pods_as_the_api_gives_them() -> bool:
        (pod,) = api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        restarts = sum(c.get("restartCount") or 0 for c in pod["containers"])
        codes = [str(c["terminated"]["exitCode"]) for c in pod["containers"] if c.get("terminated")]
        cells = element(browser, f'tr[data-pod="{pod["name"]}"]')
        shown = cells.find_element(By.CSS_SELECTOR, ".restarts").text
        code = cells.find_element(By.CSS_SELECTOR, ".exit-code").text
        return restarts > 0 and shown == str(restarts) and code == ", ".join(codes)

    until(browser, pods_as_the_api_gives_them, "the pod's restarts and exit code")
    checked(browser, "server-restarts", agreeing(browser))
