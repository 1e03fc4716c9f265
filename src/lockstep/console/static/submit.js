// Submitting a distributed workload, a training or a workspace: the dry run first (with the
// Kubernetes manifests), then the real submission.
import * as api from "./api.js";
import { field, h } from "./dom.js";
import { KIND_PATHS } from "./workloads.js";

function input(id, attributes = {}) {
  return h("input", { id, name: id, type: "text", ...attributes });
}

export async function submitPage(view, signal, say) {
  const [clusters, projects] = await Promise.all([api.get("/api/v1/clusters", signal), api.get("/api/v1/org-unit/projects", signal)]);
  const kind = h("select", { id: "kind" }, Object.keys(KIND_PATHS).map((k) => h("option", { value: k }, k)));
  const f = {
    name: input("name", { required: true }),
    project: h("select", { id: "project" }, projects.projects.map((p) => h("option", { value: p.id }, p.name))),
    image: input("image", { value: "python:3.11" }),
    command: input("command"),
    args: input("args"),
    gpu: input("gpu", { type: "number", min: "0", step: "1" }),
    cpu: input("cpu", { type: "number", min: "0", step: "0.1" }),
    memory: input("memory", { placeholder: "e.g. 1G" }),
    workers: input("workers", { type: "number", min: "1", value: "1" }),
    framework: h("select", { id: "framework" }, ["PyTorch", "MPI", "TF", "XGBoost", "JAX"].map((x) => h("option", { value: x }, x))),
    completions: input("completions", { type: "number", min: "1" }),
    parallelism: input("parallelism", { type: "number", min: "1" }),
    ports: input("ports", { placeholder: "e.g. 8080,8888" }),
  };
  const distributed = h("fieldset", { id: "distributed-fields" }, h("legend", { text: "Distributed" }), field("Workers", f.workers), field("Framework", f.framework));
  const training = h("fieldset", { id: "training-fields" }, h("legend", { text: "Training" }), field("Completions", f.completions), field("Parallelism", f.parallelism));
  const workspace = h("fieldset", { id: "workspace-fields" }, h("legend", { text: "Workspace" }), field("Ports", f.ports));
  const show = () => {
    distributed.hidden = kind.value !== "Distributed";
    training.hidden = kind.value !== "Training";
    workspace.hidden = kind.value !== "Workspace";
  };
  kind.addEventListener("change", show);
  const preview = h("pre", { id: "dry-run" });
  const submitButton = h("button", { type: "button", id: "submit", disabled: true }, "Submit");

  const body = () => {
    const spec = { image: f.image.value };
    if (f.command.value) spec.command = f.command.value;
    if (f.args.value) spec.args = f.args.value;
    const compute = {};
    if (f.gpu.value) compute.gpuDevicesRequest = Number(f.gpu.value);
    if (f.cpu.value) compute.cpuCoreRequest = Number(f.cpu.value);
    if (f.memory.value) compute.cpuMemoryRequest = f.memory.value;
    if (Object.keys(compute).length) spec.compute = compute;
    if (kind.value === "Distributed") {
      spec.numWorkers = Number(f.workers.value || 1);
      spec.distributedFramework = f.framework.value;
    } else if (kind.value === "Training") {
      if (f.completions.value) spec.completions = Number(f.completions.value);
      if (f.parallelism.value) spec.parallelism = Number(f.parallelism.value);
    } else if (f.ports.value) {
      spec.ports = f.ports.value.split(",").map((p) => ({ container: Number(p.trim()) }));
    }
    return { name: f.name.value, projectId: f.project.value, clusterId: clusters[0].uuid, spec };
  };
  const path = () => `/api/v1/workloads/${KIND_PATHS[kind.value]}`;

  const form = h("form", { id: "submit-form", onsubmit: async (e) => {
    e.preventDefault();
    submitButton.disabled = true;
    try {
      const plan = await api.post(`${path()}?dryRun=true`, body());
      let manifests = null;
      try { manifests = await api.post(`${path()}?dryRun=true&runtime=kubernetes`, body()); } catch { manifests = null; }
      preview.textContent = JSON.stringify(plan, null, 2) + (manifests ? `\n\n# Kubernetes manifests\n${JSON.stringify(manifests, null, 2)}` : "");
      submitButton.disabled = false;
      say("dry run passed: review it, then submit");
    } catch (error) {
      preview.textContent = JSON.stringify(error.body ?? error.message, null, 2);
      say(`dry run refused: ${error.message}`, true);
    }
  } },
    field("Kind", kind), field("Name", f.name), field("Project", f.project), field("Image", f.image),
    field("Command", f.command), field("Arguments", f.args), field("GPUs", f.gpu), field("CPU cores", f.cpu), field("Memory", f.memory),
    distributed, training, workspace,
    h("div", {}, h("button", { type: "submit", id: "dry-run-button" }, "Dry run"), submitButton));
  submitButton.addEventListener("click", async () => {
    try {
      const created = await api.post(path(), body());
      say(`submitted ${created.name ?? f.name.value}`);
      window.location.hash = `#/workloads/${created.workloadId ?? created.id}`;
    } catch (error) {
      say(`submission refused: ${error.message}`, true);
    }
  });
  for (const control of Object.values(f)) control.addEventListener("input", () => { submitButton.disabled = true; });
  view.replaceChildren(h("h1", { text: "Submit a workload" }), form, h("h2", { text: "Dry run" }), preview);
  show();
}
