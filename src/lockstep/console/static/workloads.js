// The workloads page: every kind, filtered, sorted and searched as the list API allows, kept
// live by the change stream (GET /api/v1/workloads?watch=true); suspend, resume and delete.
import * as api from "./api.js";
import { age, field, h, table } from "./dom.js";

export const KIND_PATHS = { Distributed: "distributed", Training: "trainings", Workspace: "workspaces" };
const PHASES = ["Creating", "Pending", "Initializing", "Running", "Resuming", "Stopping", "Stopped",
  "Degraded", "Completed", "Failed", "Deleting", "Terminating", "Unknown"];
const SORTS = { createdAt: "Age", name: "Name", phase: "Phase", projectName: "Project" };

export function kindPath(item) {
  return `/api/v1/workloads/${KIND_PATHS[item.type] || "distributed"}/${item.id}`;
}

export async function confirmed(text) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

export async function act(item, action, say) {
  try {
    if (action === "delete") {
      if (!(await confirmed(`Delete workload ${item.name}?`))) return;
      await api.remove(kindPath(item));
    } else {
      await api.post(`${kindPath(item)}/${action}`);
    }
    say(`${action} of ${item.name} requested`);
  } catch (error) {
    say(`${action} of ${item.name} failed: ${error.message}`, true);
  }
}

export function actions(item, say) {
  const running = !["Stopped", "Stopping", "Completed", "Failed"].includes(item.phase);
  return [
    running && item.actionsSupport?.suspend !== false
      ? h("button", { type: "button", class: "suspend", onclick: () => act(item, "suspend", say) }, "Suspend")
      : null,
    item.phase === "Stopped"
      ? h("button", { type: "button", class: "resume", onclick: () => act(item, "resume", say) }, "Resume")
      : null,
    h("button", { type: "button", class: "delete", onclick: () => act(item, "delete", say) }, "Delete"),
  ];
}

export function workloadsPage(view, signal, say) {
  const shown = new Map();
  const controls = {
    phase: h("select", { id: "filter-phase" }, h("option", { value: "" }, "any"), PHASES.map((p) => h("option", { value: p }, p))),
    project: h("input", { id: "filter-project", type: "text", placeholder: "project name" }),
    type: h("select", { id: "filter-type" }, h("option", { value: "" }, "any"), Object.keys(KIND_PATHS).map((k) => h("option", { value: k }, k))),
    search: h("input", { id: "search", type: "search" }),
    sortBy: h("select", { id: "sort-by" }, Object.entries(SORTS).map(([v, l]) => h("option", { value: v }, l))),
    order: h("select", { id: "sort-order" }, h("option", { value: "desc" }, "newest / Z first"), h("option", { value: "asc" }, "oldest / A first")),
  };
  const body = h("tbody", { id: "workload-rows" });
  const filters = h(
    "form",
    { class: "filters", onsubmit: (e) => e.preventDefault() },
    field("Phase", controls.phase), field("Project", controls.project), field("Type", controls.type),
    field("Search", controls.search), field("Sort by", controls.sortBy), field("Order", controls.order),
  );
  view.replaceChildren(h("h1", { text: "Workloads" }), filters,
    table(["Name", "Type", "Phase", "Project", "Pods running / requested", "GPUs", "Age", "Actions"], []));
  view.querySelector("table").replaceChild(body, view.querySelector("tbody"));

  const render = () => {
    const key = controls.sortBy.value;
    const sign = controls.order.value === "asc" ? 1 : -1;
    const rows = [...shown.values()].sort((a, b) => sign * String(a[key] ?? "").localeCompare(String(b[key] ?? "")));
    body.replaceChildren(...rows.map((w) => h(
      "tr", { "data-id": w.id, "data-phase": w.phase },
      h("td", {}, h("a", { href: `#/workloads/${w.id}` }, w.name)),
      h("td", { text: w.type }),
      h("td", { class: "phase", text: w.phase }),
      h("td", { text: w.projectName }),
      h("td", { class: "pods", text: `${w.runningPods ?? 0} / ${w.requestedPods?.number ?? "?"}` }),
      h("td", { class: "gpus", text: w.allocatedResources?.gpu ?? "–" }),
      h("td", { text: age(w.createdAt) }),
      h("td", {}, actions(w, say)),
    )));
  };

  let stream = null;
  const watch = () => {
    if (stream) stream.abort();
    stream = new AbortController();
    signal.addEventListener("abort", () => stream.abort(), { once: true });
    shown.clear();
    render();
    const params = new URLSearchParams({ watch: "true", sortBy: controls.sortBy.value, sortOrder: controls.order.value });
    if (controls.phase.value) params.append("filterBy", `phase==${controls.phase.value}`);
    if (controls.type.value) params.append("filterBy", `type==${controls.type.value}`);
    if (controls.project.value) params.append("filterBy", `projectName==${controls.project.value}`);
    if (controls.search.value) params.set("search", controls.search.value);
    const mine = stream;
    api.events(`/api/v1/workloads?${params}`, mine.signal, (name, data) => {
      if (name === "workload") shown.set(data.id, data);
      else if (name === "deleted") shown.delete(data.id);
      else if (name === "error") say(data.message, true);
      if (name !== "listed") render();
    }).catch((error) => {
      if (!mine.signal.aborted) say(`the live list stopped: ${error.message}`, true);
    });
  };
  for (const control of Object.values(controls)) control.addEventListener("change", watch);
  watch();
}
