// One workload: why it waits and its place in the queue, spec, pods, events, phase history as
// a timeline, each pod's logs followed as written, and its metrics as charts.
import * as api from "./api.js";
import { actions } from "./workloads.js";
import { age, fill, h, lineChart, table } from "./dom.js";

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
    item.phaseMessage ? h("p", { id: "phase-message", text: item.phaseMessage }) : null,
    messages.length ? h("ul", {}, messages.map((m) => h("li", { text: m }))) : null,
    item.queuePosition ? h("p", { id: "queue-position" }, `Position in its project's queue: ${item.queuePosition}`) : null,
  );
}

const METRICS_EVERY_MS = 15000;

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
  const charts = found.map((m) => lineChart(`${m.type} ${Object.values(m.labels || {}).join(" ")}`.trim(), m.values));
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

function logs(section, id, pods, signal) {
  const output = h("pre", { class: "logs", id: "logs", "aria-live": "off" });
  const chooser = h("select", { id: "log-pod" }, pods.map((p) => h("option", { value: p.name }, p.name)));
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
  start();
}

export async function workloadPage(view, signal, say, id) {
  const [item, pods, events, history] = await Promise.all([
    api.get(`/api/v1/workloads/${id}`, signal),
    api.get(`/api/v1/workloads/${id}/pods`, signal),
    api.get(`/api/v1/workloads/${id}/events?limit=100`, signal),
    api.get(`/api/v1/workloads/${id}/history?limit=500`, signal),
  ]);
  const header = h("section", { id: "summary" },
    h("h1", {}, `${item.name} `, h("span", { id: "workload-phase", text: item.phase })),
    h("p", {}, `${item.type} in ${item.projectName} · ${item.runningPods ?? 0} / ${item.requestedPods?.number ?? "?"} pods running · ${age(item.createdAt)} old`),
    h("div", { id: "workload-actions" }, actions(item, say)));
  const logSection = h("section", {}, h("h2", { text: "Logs" }));
  const metricSection = h("section", { id: "metrics" }, h("h2", { text: "Metrics" }));
  fill(view, 
    header,
    waiting(item),
    h("h2", { text: "Pods" }),
    table(["Pod", "Phase", "Node", "GPUs", "Restarts", "Exit code"], pods.pods.map((p) => h("tr", {},
      h("td", { text: p.name }), h("td", { text: p.k8sPhase ?? p.phase ?? "" }), h("td", { text: p.nodeName ?? "" }),
      h("td", { text: p.requestedResources?.gpu?.request ?? 0 }),
      h("td", { text: (p.containers || []).reduce((sum, c) => sum + (c.restartCount || 0), 0) }),
      h("td", { text: (p.containers || []).map((c) => c.terminated?.exitCode).filter((c) => c !== undefined && c !== null).join(", ") }),
    ))),
    logSection,
    metricSection,
    h("h2", { text: "Phase history" }),
    h("ol", { class: "timeline", id: "timeline" }, history.records.filter((r) => r.meta.type === "PhaseUpdate").map((r) =>
      h("li", {}, h("time", { datetime: r.meta.creationTimestamp, text: r.meta.creationTimestamp }), ` ${r.spec.phaseUpdate.phase} `, r.spec.phaseUpdate.phaseMessage || ""))),
    h("h2", { text: "Events" }),
    table(["When", "Type", "Reason", "Message"], events.events.map((e) => h("tr", {},
      h("td", { text: e.createdAt }), h("td", { text: e.type }), h("td", { text: e.reason }), h("td", { text: e.message })))),
    h("h2", { text: "Spec" }),
    h("pre", { id: "spec", text: JSON.stringify(item, null, 2) }),
  );
  logs(logSection, id, pods.pods, signal);
  metrics(metricSection, id, signal);
  // The phase and actions follow the change stream.
  api.events(`/api/v1/workloads?watch=true&filterBy=${encodeURIComponent(`name==${item.name}`)}`, signal, (name, data) => {
    if (name === "workload" && data.id === id) {
      document.getElementById("workload-phase").textContent = data.phase;
      fill(document.getElementById("workload-actions"), actions(data, say));
    } else if (name === "deleted" && data.id === id) {
      document.getElementById("workload-phase").textContent = "Deleted";
    }
  }).catch(() => {});
}
