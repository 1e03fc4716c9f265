// Projects and departments (their quotas per node pool as bars, their queues in admission
// order), and nodes and node pools (capacity and what is allocated, GPU by GPU).
import * as api from "./api.js";
import { fill, h, quotaBars, table } from "./dom.js";

const RESOURCES = ["gpu", "cpu", "memory"];

function limitOf(resources, pool, resource) {
  const entry = (resources || []).find((r) => r.nodePool?.name === pool);
  return entry?.[resource]?.limit;
}

export async function projectsPage(view, signal) {
  const [projects, departments, queue] = await Promise.all([
    api.get("/api/v1/org-unit/projects", signal),
    api.get("/api/v1/org-unit/departments", signal),
    api.get("/api/v1/scheduling/queue", signal),
  ]);
  const byProject = new Map(queue.projects.map((q) => [String(q.projectId), q]));
  const sections = projects.projects.map((project) => {
    const queued = byProject.get(String(project.id));
    const bars = (queued?.nodePools || []).flatMap((pool) => RESOURCES.filter((r) => pool[r]).map((r) =>
      quotaBars(`${pool.nodePool} · ${r}`, { ...pool[r], limit: limitOf(project.resources, pool.nodePool, r) })));
    const waitingRows = (queued?.waiting || []).map((w) => h("tr", {},
      h("td", { text: w.position ?? "parked" }), h("td", {}, h("a", { href: `#/workloads/${w.workloadId}` }, w.name)),
      h("td", { text: w.phase }), h("td", { text: w.phaseReason ?? "" }), h("td", { text: w.phaseMessage || "waiting to be scheduled" })));
    return h("section", { class: "project", "data-project": project.name },
      h("h2", { text: `Project ${project.name}` }), bars,
      waitingRows.length ? table(["#", "Workload", "Phase", "Reason", "Why it waits"], waitingRows) : h("p", { text: "no workload waits" }));
  });
  const departmentRows = departments.departments.map((d) => h("section", { class: "department" },
    h("h2", { text: `Department ${d.name}` }),
    (d.resources || []).flatMap((r) => RESOURCES.filter((k) => r[k]).map((k) => {
      const status = (d.status?.nodePoolQuotaStatuses || []).find((s) => s.nodePoolName === r.nodePool?.name);
      return quotaBars(`${r.nodePool?.name} · ${k}`, { deserved: r[k].deserved, limit: r[k].limit, allocated: status?.allocated?.[k] });
    }))));
  fill(view, h("h1", { text: "Projects and departments" }), sections, departmentRows);
}

function amounts(of) {
  if (!of) return "";
  return `${of.gpus ?? 0} GPUs · ${of.cpuCores ?? 0} CPU cores · ${of.memory ?? 0} memory`;
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
    table(["Pool", "Capacity", "Allocated"], pools.nodepools.map((p) => h("tr", {},
      h("td", { text: p.name }), h("td", { text: amounts(p.capacity) }), h("td", { text: amounts(p.allocated) })))),
    h("h2", { text: "Nodes" }),
    table(["Node", "Pool", "Status", "CPU cores", "Memory", "GPUs, device by device"], (nodes.nodes || nodes).map((n) => h("tr", { "data-node": n.name },
      h("td", { text: n.name }), h("td", { text: n.nodePool }), h("td", { text: n.status }),
      h("td", { text: `${n.allocated.cpuCores} of ${n.capacity.cpuCores}` }),
      h("td", { text: `${n.allocated.memory} of ${n.capacity.memory}` }),
      h("td", {}, (n.gpuDevices || []).length
        ? h("ul", {}, n.gpuDevices.map((g) => h("li", { text: `GPU ${g.index}: ${g.allocated} allocated` })))
        : "none"),
    ))),
  );
}
