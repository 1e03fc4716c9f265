// Building the page: elements from plain data (text is always set as text, never as HTML),
// and inline SVG charts.
const SVG = "http://www.w3.org/2000/svg";

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "text") element.textContent = value;
    else element.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function field(label, control) {
  return h("label", {}, h("span", { text: label }), control);
}

export function table(columns, rows) {
  return h(
    "table",
    {},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", text: c })))),
    h("tbody", {}, rows),
  );
}

export function age(iso) {
  if (!iso) return "";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** A quota's figure as Run:ai writes it: -1 (or none) means no quota. */
function shown(value) {
  if (value === undefined || value === null || value < 0) return "none";
  return Math.round(value * 1000) / 1000;
}

/** Horizontal bars of one quota: deserved, fair share and allocated, the limit as a line. */
export function quotaBars(label, amounts) {
  const values = [amounts.deserved, amounts.fairShare, amounts.allocated, amounts.limit]
    .map((v) => (typeof v === "number" && v >= 0 ? v : 0));
  const scale = Math.max(1, ...values);
  const width = 320;
  const x = (v) => Math.round(((v || 0) / scale) * width);
  const rows = [
    ["deserved", amounts.deserved, "bar-deserved"],
    ["fair share", amounts.fairShare, "bar-fair"],
    ["allocated", amounts.allocated, "bar-allocated"],
  ];
  const svg = s(
    "svg",
    { width: width + 160, height: 56, role: "img", "aria-label": `${label} quota`, class: "quota" },
    rows.map(([name, value, css], i) => [
      s("rect", { x: 90, y: i * 16 + 2, width, height: 12, class: "bar-back" }),
      s("rect", { x: 90, y: i * 16 + 2, width: x(value), height: 12, class: css }),
      s("text", { x: 0, y: i * 16 + 12 }, name),
      s("text", { x: width + 96, y: i * 16 + 12 }, shown(value)),
    ]),
    typeof amounts.limit === "number" && amounts.limit >= 0
      ? s("line", { x1: 90 + x(amounts.limit), x2: 90 + x(amounts.limit), y1: 0, y2: 50, class: "bar-limit" })
      : null,
  );
  return h("figure", { class: "quota-figure" }, h("figcaption", { text: label }), svg);
}

/** A line chart of [{value, timestamp}] as inline SVG. */
export function lineChart(title, samples) {
  const width = 360;
  const height = 120;
  const points = samples
    .map((p) => [Date.parse(p.timestamp), Number(p.value)])
    .filter(([t, v]) => !Number.isNaN(t) && !Number.isNaN(v));
  const times = points.map((p) => p[0]);
  const values = points.map((p) => p[1]);
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  const top = Math.max(...values, 0) || 1;
  const px = (t) => 30 + (t1 === t0 ? 0 : ((t - t0) / (t1 - t0)) * (width - 40));
  const py = (v) => height - 15 - (v / top) * (height - 30);
  const path = points.map(([t, v], i) => `${i ? "L" : "M"}${px(t).toFixed(1)},${py(v).toFixed(1)}`);
  return s(
    "svg",
    { width, height, role: "img", "aria-label": title, class: "metric-chart" },
    s("text", { x: 30, y: 10 }, title),
    s("line", { x1: 30, x2: width - 10, y1: height - 15, y2: height - 15, class: "chart-axis" }),
    s("line", { x1: 30, x2: 30, y1: 12, y2: height - 15, class: "chart-axis" }),
    s("text", { x: 0, y: 20 }, String(Math.round(top * 100) / 100)),
    s("path", { d: path.join(" "), class: "chart-line" }),
    // Each sample also as a dot, so that a chart of one sample shows it.
    ...points.map(([t, v]) => s("circle", { cx: px(t).toFixed(1), cy: py(v).toFixed(1), r: 2, class: "chart-point" })),
  );
}

/** Replace an element's content (lists flattened, nulls dropped). */
export function fill(element, ...children) {
  element.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}
