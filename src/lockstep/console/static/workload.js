// One workload: why it waits and its place in the queue, its restarts, spec, pods, events,
// phase history as a timeline, each pod's logs followed as written, and its metrics as charts.
// Everything but the logs and charts is drawn from one state (the workload, its pods, events
// and history read together), again each time the change stream says the workload changed, so
// that the phase in the header and the page below it always agree.
import * as api from "./api.js";
import { actions } from "./workloads.js";
import { age, bytes, cores, fill, h, lineChart, rounded, table } from "./dom.js";

const METRICS = "CPU_USAGE_CORES,CPU_MEMORY_USAGE_BYTES,GPU_UTILIZATION";

function waiting(item) {
  const messages = (item.pendingSchedulingMessages || [])
    .map((m) => `${m.nodePool ? `node pool ${m.nodePool}: ` : ""}${m.userMessage || m.reason || m.message || ""}`)
    .filter((m) => m && !m.endsWith(item.phaseMessage || "\u0000"));
  if (!["Pending", "Creating"].includes(item.phase) && !messages.length) return null;
  return h(
    "section", { class: "waiting", id: "waiting" },
    h("h2", { text: "Why it waits" }),
    item.phaseReason ? h("p", { id: "phase-reason" }, `Reason: ${item.phaseReason}`) : null,
    item.phaseMessage ? h("p", { id: "phase-message", class: "message", text: item.phaseMessage }) : null,
    messages.length ? h("ul", {}, messages.map((m) => h("li", { class: "message", text: m }))) : null,
    item.queuePosition ? h("p", { id: "queue-position" }, `Position in its project's queue: ${item.queuePosition}`) : null,
  );
}

const METRICS_EVERY_MS = 15000;

/** How a metric's figures read: bytes in human units, CPU in cores, utilization in percent. */
function chartFormat(type) {
  if (type.endsWith("_BYTES")) return bytes;
  if (type.endsWith("_CORES")) return cores;
  if (type.includes("UTILIZATION")) return (v) => `${rounded(v, 1)} %`;
  return (v) => rounded(v, 2);
}

async function drawMetrics(section, id, signal) {
  const end = new Date();
  const start = new Date(end.getTime() - 30 * 60 * 1000);
  const params = new URLSearchParams({ metricType: METRICS, start: start.toISOString(), end: end.toISOString(), numberOfSamples: "60" });
  let found = [];
  let failure = null;
  try {
    const body = await api.get(`/api/v1/workloads/${id}/metrics?${params}`, signal);
    found = (body?.measurements || []).filter((m) => (m.values || []).length);
  } catch (error) {
    if (error.status !== 404) failure = error.message;
  }
  const charts = found.map((m) => lineChart(`${m.type} ${Object.values(m.labels || {}).join(" ")}`.trim(), m.values, chartFormat(m.type)));
  fill(section, h("h2", { text: "Metrics" }),
    failure ? h("p", { class: "error", text: failure }) : null,
    charts.length ? charts : h("p", { id: "no-samples", text: "no samples yet" }));
}

/** The metrics drawn now and again every METRICS_EVERY_MS while the page is open. */
function metrics(section, id, signal) {
  drawMetrics(section, id, signal);
  const timer = setInterval(() => drawMetrics(section, id, signal), METRICS_EVERY_MS);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}

/** The logs of the pod chosen, followed as written; `update(pods)` when the pods change. */
function logs(section, id, signal) {
  const output = h("pre", { class: "logs", id: "logs", "aria-live": "off" });
  const chooser = h("select", { id: "log-pod" });
  let current = null;
  const start = () => {
    if (current) current.abort();
    current = new AbortController();
    signal.addEventListener("abort", () => current.abort(), { once: true });
    output.textContent = "";
    if (!chooser.value) return;
    const mine = current;
    const path = `/api/v1/workloads/${id}/pods/${encodeURIComponent(chooser.value)}/logs?follow=true`;
    api.follow(path, mine.signal, (text) => output.append(text)).catch((error) => {
      if (!mine.signal.aborted) output.append(`\n[${error.message}]`);
    });
  };
  chooser.addEventListener("change", start);
  section.append(h("label", {}, h("span", { text: "Pod" }), chooser), output);
  let following = null;
  return (pods) => {
    const names = pods.map((p) => p.name);
    if (names.join("\n") !== [...chooser.options].map((o) => o.value).join("\n")) {
      const chosen = chooser.value;
      chooser.replaceChildren(...names.map((name) => h("option", { value: name }, name)));
      if (names.includes(chosen)) chooser.value = chosen;
    }
    if (chooser.value !== following) {
      following = chooser.value;
      start();
    }
  };
}

const REFRESH_EVERY_MS = 5000;

/** Phases in which a workload's pods are not restarted. */
const SETTLED = ["Completed", "Failed", "Stopped", "Stopping", "Deleting", "Terminating", "Deleted"];
/** A BackOff event's message: `pod hello-0 exited with code 127; restart 2 of 6 in 8 s (at
 * 2026-12-04T20:41:07Z)` (or `pod hello-0 ended; restart 3 in …` without an exit code or a limit). */
const BACKOFF = /^pod (\S+) (exited with code -?\d+|ended); (restart \d+(?: of \d+)?) in [\d.]+ s \(at ([^)\s]+)\)$/;

function clock(date) {
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

function countdown(at) {
  const seconds = Math.round((at - Date.now()) / 1000);
  if (seconds > 0) return `in ${seconds} s`;
  return seconds === 0 ? "now" : `${-seconds} s ago`;
}

/** The newest restart (a BackOff event) while the workload may still restart: the exit code
 * and when the next try starts. */
function restarting(item, events) {
  if (SETTLED.includes(item.phase)) return null;
  const newest = events.filter((e) => e.reason === "BackOff")
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
  if (!newest) return null;
  const match = (newest.message || "").match(BACKOFF);
  const at = match ? new Date(match[4]) : null;
  if (!match || Number.isNaN(at.getTime())) return h("p", { id: "restarting", class: "restarting" }, "Restarting: ", h("span", { class: "message", text: newest.message }));
  const [, pod, ended, restart, iso] = match;
  return h("p", { id: "restarting", class: "restarting" },
    `Restarting: pod ${pod} ${ended}; ${restart} at `,
    h("time", { datetime: iso, text: clock(at) }), " (",
    h("span", { class: "countdown", "data-at": at.getTime(), text: countdown(at) }), ")");
}

function podRows(pods) {
  return pods.map((p) => h("tr", { "data-pod": p.name },
    h("td", { text: p.name }), h("td", { text: p.k8sPhase ?? p.phase ?? "" }), h("td", { text: p.nodeName ?? "" }),
    h("td", { text: p.requestedResources?.gpu?.request ?? 0 }),
    h("td", { class: "restarts", text: (p.containers || []).reduce((sum, c) => sum + (c.restartCount || 0), 0) }),
    h("td", { class: "exit-code", text: (p.containers || []).map((c) => c.terminated?.exitCode).filter((c) => c !== undefined && c !== null).join(", ") }),
  ));
}

/** The workload, its pods, events and history, read together. */
async function load(id, signal) {
  const [item, pods, events, history] = await Promise.all([
    api.get(`/api/v1/workloads/${id}`, signal),
    api.get(`/api/v1/workloads/${id}/pods`, signal),
    api.get(`/api/v1/workloads/${id}/events?limit=100`, signal),
    api.get(`/api/v1/workloads/${id}/history?limit=500`, signal),
  ]);
  return { item, pods: pods.pods, events: events.events, history: history.records };
}

export async function workloadPage(view, signal, say, id) {
  let state = await load(id, signal);
  const summary = h("section", { id: "summary" });
  const waitingSlot = h("div", {});
  const podTable = table(["Pod", "Phase", "Node", "GPUs", "Restarts", "Exit code"], []);
  const timeline = h("ol", { class: "timeline", id: "timeline" });
  const eventTable = table(["When", "Type", "Reason", "Message"], []);
  const spec = h("pre", { id: "spec" });
  const logSection = h("section", {}, h("h2", { text: "Logs" }));
  const metricSection = h("section", { id: "metrics" }, h("h2", { text: "Metrics" }));
  const page = h("article", { id: "workload" }, summary, waitingSlot, h("h2", { text: "Pods" }), podTable,
    logSection, metricSection, h("h2", { text: "Phase history" }), timeline, h("h2", { text: "Events" }), eventTable,
    h("h2", { text: "Spec" }), spec);
  const followLogs = logs(logSection, id, signal);

  const draw = () => {
    const { item, pods, events, history } = state;
    page.dataset.phase = item.phase;
    fill(summary,
      h("h1", {}, `${item.name} `, h("span", { id: "workload-phase", text: item.phase })),
      h("p", {}, `${item.type} in ${item.projectName} · ${item.runningPods ?? 0} / ${item.requestedPods?.number ?? "?"} pods running · ${age(item.createdAt)} old`),
      restarting(item, events),
      h("div", { id: "workload-actions" }, item.phase === "Deleted" ? null : actions(item, say)));
    fill(waitingSlot, waiting(item));
    fill(podTable.tBodies[0], podRows(pods));
    fill(timeline, history.filter((r) => r.meta.type === "PhaseUpdate").map((r) =>
      h("li", {}, h("time", { datetime: r.meta.creationTimestamp, text: r.meta.creationTimestamp }), ` ${r.spec.phaseUpdate.phase} `, h("span", { class: "message", text: r.spec.phaseUpdate.phaseMessage || "" }))));
    fill(eventTable.tBodies[0], events.map((e) => h("tr", {},
      h("td", { text: e.createdAt }), h("td", { text: e.type }), h("td", { text: e.reason }), h("td", { class: "message", text: e.message }))));
    const specText = JSON.stringify(item, null, 2);
    if (spec.textContent !== specText) spec.textContent = specText; // keeps where it was scrolled
    followLogs(pods);
  };
  draw();
  fill(view, page);
  metrics(metricSection, id, signal);

  // The next try's countdown, each second.
  const ticker = setInterval(() => {
    for (const c of page.querySelectorAll(".countdown")) c.textContent = countdown(Number(c.dataset.at));
  }, 1000);
  signal.addEventListener("abort", () => clearInterval(ticker), { once: true });

  // Each change the stream reports, and every REFRESH_EVERY_MS while it may still change (the
  // stream reports changes of the list item only, not a new event or a pod's restart): the
  // whole state read again, then drawn at once. Changes that come while a read is under way
  // are taken in by one more read after it.
  let deleted = false;
  let reading = false;
  let again = false;
  const refresh = async () => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const next = await load(id, signal);
        if (deleted || signal.aborted) return;
        state = next;
        draw();
      } while (again);
    } catch (error) {
      if (!signal.aborted && !deleted && error.status !== 404) say(`reading ${state.item.name} failed: ${error.message}`, true);
    } finally {
      reading = false;
    }
  };
  const poller = setInterval(() => {
    if (!SETTLED.includes(state.item.phase)) refresh();
  }, REFRESH_EVERY_MS);
  signal.addEventListener("abort", () => clearInterval(poller), { once: true });
  api.events(`/api/v1/workloads?watch=true&filterBy=${encodeURIComponent(`name==${state.item.name}`)}`, signal, (name, data) => {
    if (data.id !== id || deleted) return;
    if (name === "workload") refresh();
    else if (name === "deleted") {
      deleted = true;
      state = { ...state, item: { ...state.item, phase: "Deleted" } };
      draw();
    }
  }).catch(() => {});
}
