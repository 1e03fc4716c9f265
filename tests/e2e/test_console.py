"""The web console in a real headless Chromium (Debian's chromium and chromedriver, driven by
Selenium), against a real `lockstep serve` with virtual GPU nodes: sign-in through the form,
a workload submitted through the API appearing live, its page with logs that grow, suspending
it from the page, a waiting workload's reason and queue position, submitting from the form
after its dry run; and the console's security: a strict Content-Security-Policy, the token in
sessionStorage only (no cookie, never in a URL), every API call the pages make carrying it.

Each page is photographed at 1280 by 800 into `SCREENSHOTS` (not committed)."""

from __future__ import annotations

import json
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

from lockstep.domain.clock import iso
from tests.conftest import running
from tests.support.api import ADMIN_ID, ADMIN_SECRET, Api, poll
from tests.support.requests import distributed, python, sleeping
from tests.support.server import LiveServer

SCREENSHOTS = Path(__file__).parent / "console-screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 60.0
CHATTY = python(
    "import time\nfor i in range(100000):\n    print('line', i, flush=True)\n    time.sleep(0.2)"
)


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """One virtual node of 4 GPUs."""
    nodes = [{"name": "gpu-0", "cpu_cores": 32, "memory": "128Gi", "gpus": 4}]
    settings = {"NODES": json.dumps(nodes)}
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as live:
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
    finally:
        driver.quit()


def photograph(browser: WebDriver, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def until(browser: WebDriver, check: Callable[[], Any], what: str) -> Any:
    def attempt() -> Any:
        try:
            return check() or None
        except Exception:  # an element replaced while read: read again
            return None

    return poll(attempt, timeout=WAIT, what=lambda: f"{what}; page:\n{_page_text(browser)}")


def _page_text(browser: WebDriver) -> str:
    try:
        return str(browser.find_element(By.TAG_NAME, "body").text)[:2000]
    except Exception:
        return "(unreadable)"


def element(browser: WebDriver, css: str) -> WebElement:
    found: WebElement = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, css), css)
    return found


def sign_in(browser: WebDriver, server: LiveServer) -> None:
    browser.get(f"{server.url}/")
    element(browser, "#client-id").send_keys(ADMIN_ID)
    secret = browser.find_element(By.CSS_SELECTOR, "#client-secret")
    photograph(browser, "sign-in")
    secret.send_keys(ADMIN_SECRET, Keys.ENTER)
    element(browser, "#workload-rows")


def row(browser: WebDriver, workload_id: str) -> WebElement:
    return element(browser, f'tr[data-id="{workload_id}"]')


def project(api: Api, name: str, *, gpu_limit: float) -> str:
    pools = api.get("/api/v1/node-pools").json()["nodepools"]
    pool = next(p for p in pools if p["name"] == "default")
    body = {
        "name": name,
        "clusterId": api.cluster_id(),
        "resources": [
            {
                "nodePool": {"id": str(pool["id"]), "name": "default"},
                "gpu": {"deserved": 0, "limit": gpu_limit},
            }
        ],
    }
    response = api.post("/api/v1/org-unit/projects", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


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
    photograph(browser, "workloads")

    # Its page: logs that grow as the pod writes them.
    row(browser, chatty_id).find_element(By.LINK_TEXT, "chatty").click()
    logs = element(browser, "#logs")
    until(browser, lambda: "line 2" in logs.text, "the first lines of its logs")
    seen = len(logs.text)
    until(browser, lambda: len(logs.text) > seen + 20, "its logs to grow")
    element(browser, "#no-samples")  # the metrics endpoint answers nothing yet
    assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#timeline li")]
    photograph(browser, "workload")

    # Suspended from the page: the phase shown follows.
    element(browser, "#workload-actions .suspend").click()
    until(
        browser,
        lambda: element(browser, "#workload-phase").text == "Stopped",
        "the phase to show Stopped",
    )
    assert api.workload(chatty_id)["phase"] == "Stopped"

    # A waiting workload: its reason and its place in the queue.
    capped = project(api, "capped", gpu_limit=4)
    two_gpus_a_pod = {"gpuDevicesRequest": 2}
    first = api.create(
        sleeping(
            api.cluster_id(), name="first", project_id=capped, workers=1, compute=two_gpus_a_pod
        )
    )
    api.wait_for(first["workloadId"], ["Running"])
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
    photograph(browser, "waiting-workload")

    browser.get(f"{server.url}/console/#/projects")
    queue = element(browser, '[data-project="capped"]')
    until(browser, lambda: "second" in queue.text and "OverLimit" in queue.text, "its queue")
    assert queue.find_elements(By.CSS_SELECTOR, "svg.quota")
    photograph(browser, "projects")

    browser.get(f"{server.url}/console/#/nodes")
    node = element(browser, '[data-node="gpu-0"]')
    until(browser, lambda: "GPU 3" in node.text, "the node's GPUs one by one")
    photograph(browser, "nodes")

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
    photograph(browser, "submit")
    submit.click()

    def submitted() -> dict[str, Any] | None:
        listed = api.get("/api/v1/workloads", params={"filterBy": "name==from-the-form"})
        items: list[dict[str, Any]] = listed.json()["workloads"]
        return items[0] if items else None

    created = poll(submitted, timeout=WAIT, what="the form's workload to be stored")
    assert created["type"] == "Training"
    until(browser, lambda: "from-the-form" in element(browser, "#summary").text, "its page")

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
    console: list[dict[str, Any]] = browser.get_log("browser")  # type: ignore[no-untyped-call]
    assert not [m for m in console if "Content Security Policy" in m["message"]], console


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
    photograph(browser, "metrics")
