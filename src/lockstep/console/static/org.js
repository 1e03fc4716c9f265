// Projects and departments (each department with its projects under it; their quotas per node
// pool as bars, each project's queue in admission order), and nodes and node pools (capacity and
// what is allocated, GPU by GPU). Quantities are shown in human units (23.5 GiB, 0.5 cores).
import * as api from "./api.js";
import { bytes, cores, fill, h, QUOTA_FORMATS, quotaBars, rounded, table } from "./dom.js";

const RESOURCES = ["gpu", "cpu", "memory"];
const MEMORY_UNIT_BYTES = { Mib: 2 ** 20, MB: 1e6, GB: 1e9 };
const STATUS_MEMORY_BYTES = 1e6; // a quota status counts memory in MB

/** The `resources[]` entry of a pool: the one naming it, else the one naming none. */
function entryOf(resources, pool) {
  const entries = resources || [];
  return entries.find((r) => r.nodePool?.name === pool) ?? entries.find((r) => !r.nodePool?.name);
}

/** A `resources[]` figure in the scheduler's units (memory in bytes); -1 stays unlimited. */
function figure(entry, resource, key) {
  const value = entry?.[resource]?.[key];
  if (typeof value !== "number") return undefined;
  if (value < 0) return -1;
  return resource === "memory" ? value * (MEMORY_UNIT_BYTES[entry.memory.units] ?? MEMORY_UNIT_BYTES.MB) : value;
}

/** What a quota status says is allocated of `resource` in `pool`, in the scheduler's units. */
function allocatedOf(status, pool, resource) {
  const value = (status?.nodePoolQuotaStatuses || []).find((s) => s.nodePoolName === pool)?.allocated?.[resource];
  if (typeof value !== "number") return undefined;
  return resource === "memory" ? value * STATUS_MEMORY_BYTES : value;
}

function statusPools(status) {
  return (status?.nodePoolQuotaStatuses || []).map((s) => s.nodePoolName);
}

/** GPUs always; CPU and memory when there is a quota, a limit or a use of them. */
function worthShowing(resource, amounts) {
  const nonZero = (v) => typeof v === "number" && v !== 0;
  return resource === "gpu" || nonZero(amounts.deserved) || nonZero(amounts.fairShare) || nonZero(amounts.allocated)
    || nonZero(amounts.requested) || (typeof amounts.limit === "number" && amounts.limit >= 0);
}

function bars(pools, amountsOf) {
  return pools.flatMap((pool) => RESOURCES.map((r) => [r, amountsOf(pool, r)])
    .filter(([r, amounts]) => worthShowing(r, amounts))
    .map(([r, amounts]) => quotaBars(`${pool} · ${r}`, amounts, QUOTA_FORMATS[r])));
}

/** A project's bars: the shares the last scheduling cycle found (else its quota and what its
 * status says is allocated), its limit as a line. */
function projectBars(project, queued) {
  const shares = new Map((queued?.nodePools || []).map((p) => [p.nodePool, p]));
  const pools = [...new Set([...shares.keys(), ...statusPools(project.status)])].sort();
  return bars(pools, (pool, r) => {
    const entry = entryOf(project.resources, pool);
    const limit = figure(entry, r, "limit");
    const found = shares.get(pool)?.[r];
    if (found) return { deserved: found.deserved, fairShare: found.fairShare, allocated: found.allocated, requested: found.requested, limit };
    return { deserved: figure(entry, r, "deserved") ?? 0, allocated: allocatedOf(project.status, pool, r) ?? 0, limit };
  });
}

/** A department's bars: its own quota, or without one what its projects deserve together
 * (unlimited if one of them is), as the scheduler counts it; what its projects hold. */
function departmentBars(department, projects) {
  const pools = [...new Set([...statusPools(department.status), ...(department.resources || []).map((r) => r.nodePool?.name).filter(Boolean)])].sort();
  return bars(pools, (pool, r) => {
    const allocated = allocatedOf(department.status, pool, r) ?? 0;
    if ((department.resources || []).length) {
      const entry = entryOf(department.resources, pool);
      return { deserved: figure(entry, r, "deserved") ?? 0, allocated, limit: figure(entry, r, "limit") };
    }
    const each = projects.map((p) => figure(entryOf(p.resources, pool), r, "deserved") ?? 0);
    return { deserved: each.some((v) => v < 0) ? -1 : each.reduce((a, b) => a + b, 0), allocated };
  });
}

function projectSection(project, queued) {
  const waitingRows = (queued?.waiting || []).map((w) => h("tr", {},
    h("td", { text: w.position ?? "parked" }), h("td", {}, h("a", { href: `#/workloads/${w.workloadId}` }, w.name)),
    h("td", { text: w.phase }), h("td", { text: w.phaseReason ?? "" }), h("td", { class: "message", text: w.phaseMessage || "waiting to be scheduled" })));
  return h("section", { class: "project", "data-project": project.name },
    h("h3", { text: `Project ${project.name}` }), projectBars(project, queued),
    waitingRows.length ? table(["#", "Workload", "Phase", "Reason", "Why it waits"], waitingRows) : h("p", { text: "no workload waits" }));
}

export async function projectsPage(view, signal) {
  const [projects, departments, queue] = await Promise.all([
    api.get("/api/v1/org-unit/projects", signal),
    api.get("/api/v1/org-unit/departments", signal),
    api.get("/api/v1/scheduling/queue", signal),
  ]);
  const byProject = new Map(queue.projects.map((q) => [String(q.projectId), q]));
  const known = new Set(departments.departments.map((d) => String(d.id)));
  const membersOf = (id) => projects.projects.filter((p) => String(p.parentId) === String(id));
  const sections = departments.departments.map((d) => {
    const members = membersOf(d.id);
    return h("section", { class: "department", "data-department": d.name },
      h("h2", { text: `Department ${d.name}` }),
      (d.resources || []).length ? null : h("p", { class: "note", text: "No quota of its own: it deserves what its projects deserve together." }),
      departmentBars(d, members),
      members.length ? members.map((p) => projectSection(p, byProject.get(String(p.id)))) : h("p", { text: "no project" }));
  });
  const others = projects.projects.filter((p) => !known.has(String(p.parentId)));
  fill(view, h("h1", { text: "Projects and departments" }), sections,
    others.length ? h("section", { class: "department" }, h("h2", { text: "Projects of departments you cannot see" }),
      others.map((p) => projectSection(p, byProject.get(String(p.id))))) : null);
}

function amounts(of) {
  if (!of) return "";
  return `${rounded(Number(of.gpus ?? 0), 3)} GPUs · ${cores(of.cpuCores ?? 0)} · ${bytes(of.memory ?? 0)} memory`;
}

function gpuDevice(g) {
  const memory = g.memory ? ` · ${bytes(g.memory)} memory` : "";
  return h("li", { text: `GPU ${g.index}: ${rounded(Number(g.allocated ?? 0), 3)} allocated${memory}` });
}

export async function nodesPage(view, signal) {
  const clusters = await api.get("/api/v1/clusters", signal);
  const [nodes, pools] = await Promise.all([
    api.get(`/api/v1/clusters/${clusters[0].uuid}/nodes`, signal),
    api.get("/api/v1/node-pools", signal),
  ]);
  fill(view,
    h("h1", { text: "Nodes and node pools" }),
    h("h2", { text: "Node pools" }),
    table(["Pool", "Capacity", "Allocated"], pools.nodepools.map((p) => h("tr", { "data-pool": p.name },
      h("td", { text: p.name }), h("td", { text: amounts(p.capacity) }), h("td", { text: amounts(p.allocated) })))),
    h("h2", { text: "Nodes" }),
    table(["Node", "Pool", "Status", "CPU", "Memory", "GPUs, device by device"], (nodes.nodes || nodes).map((n) => h("tr", { "data-node": n.name },
      h("td", { text: n.name }), h("td", { text: n.nodePool }), h("td", { text: n.status }),
      h("td", { class: "cpu", text: `${cores(n.allocated.cpuCores)} of ${cores(n.capacity.cpuCores)}` }),
      h("td", { class: "memory", text: `${bytes(n.allocated.memory)} of ${bytes(n.capacity.memory)}` }),
      h("td", {}, (n.gpuDevices || []).length ? h("ul", {}, n.gpuDevices.map(gpuDevice)) : "none"),
    ))),
  );
}
