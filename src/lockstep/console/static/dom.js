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

/** A number rounded to at most `digits` decimals, without trailing zeros. */
export function rounded(value, digits = 1) {
  const scale = 10 ** digits;
  return String(Math.round(value * scale) / scale);
}

const BINARY = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL = { n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

/** A Kubernetes quantity (`24683792Ki`, `1.5G`, `500m`, 42) as a number; null if it is none. */
export function quantity(value) {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value === undefined || value === null) return null;
  const match = String(value).trim().match(QUANTITY);
  if (!match) return null;
  return Number(match[1]) * (match[2] in BINARY ? BINARY[match[2]] : DECIMAL[match[2] ?? ""]);
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/** A byte count (a number or a quantity) in human units: `23.5 GiB`. */
export function bytes(value) {
  let amount = quantity(value);
  if (amount === null) return value === undefined || value === null ? "" : String(value);
  let unit = 0;
  while (Math.abs(amount) >= 1024 && unit < BYTE_UNITS.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  if (Math.abs(Math.round(amount * 10) / 10) >= 1024 && unit < BYTE_UNITS.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return `${rounded(amount, 1)} ${BYTE_UNITS[unit]}`;
}

/** CPU (a number of cores or a quantity: `32`, `500m`) in cores: `0.5 cores`. */
export function cores(value) {
  const amount = quantity(value);
  if (amount === null) return value === undefined || value === null ? "" : String(value);
  return `${rounded(amount, 2)} ${amount === 1 ? "core" : "cores"}`;
}

/** How each resource's quota figure reads, in the scheduler's units (GPU devices, CPU
 * millicores, memory bytes). */
export const QUOTA_FORMATS = {
  gpu: (v) => `${rounded(v, 3)} GPU${v === 1 ? "" : "s"}`,
  cpu: (v) => cores(v / 1000),
  memory: (v) => bytes(v),
};

/** A quota's figure: -1 means unlimited, none when there is no figure. */
function shown(value, format) {
  if (value === undefined || value === null) return "none";
  if (value < 0) return "unlimited";
  return format(value);
}

const BAR_ROWS = [["deserved", "deserved", "bar-deserved"], ["fairShare", "fair share", "bar-fair"], ["allocated", "allocated", "bar-allocated"]];

/** Horizontal bars of one quota: deserved, fair share and allocated (those given), the limit
 * as a line. -1 is unlimited: a full bar marked as such. Every bar stays within its box. */
export function quotaBars(label, amounts, format = (v) => rounded(v, 3)) {
  const known = (v) => typeof v === "number" && Number.isFinite(v);
  const finite = [amounts.deserved, amounts.fairShare, amounts.allocated, amounts.limit].filter((v) => known(v) && v >= 0);
  const scale = Math.max(...finite, 0) || 1;
  const width = 320;
  const x = (v) => Math.min(width, Math.max(0, Math.round((v / scale) * width)));
  const rows = BAR_ROWS.filter(([key]) => amounts[key] !== undefined);
  const svg = s(
    "svg",
    { width: width + 170, height: rows.length * 16 + 8, role: "img", "aria-label": `${label} quota`, class: "quota" },
    rows.map(([key, name, css], i) => {
      const value = amounts[key];
      const unlimited = known(value) && value < 0;
      const length = unlimited ? width : known(value) ? x(value) : 0;
      return [
        s("rect", { x: 90, y: i * 16 + 2, width, height: 12, class: "bar-back" }),
        s("rect", { x: 90, y: i * 16 + 2, width: length, height: 12, class: unlimited ? `${css} bar-unlimited` : css }),
        s("text", { x: 0, y: i * 16 + 12 }, name),
        s("text", { x: width + 96, y: i * 16 + 12 }, shown(value, format)),
      ];
    }),
    known(amounts.limit) && amounts.limit >= 0
      ? s("line", { x1: 90 + x(amounts.limit), x2: 90 + x(amounts.limit), y1: 0, y2: rows.length * 16 + 4, class: "bar-limit" })
      : null,
  );
  const limit = known(amounts.limit) && amounts.limit >= 0 ? ` (limit ${format(amounts.limit)})` : "";
  return h("figure", { class: "quota-figure" }, h("figcaption", { text: `${label}${limit}` }), svg);
}

/** A line chart of [{value, timestamp}] as inline SVG. */
export function lineChart(title, samples, format = (v) => rounded(v, 2)) {
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
    s("text", { x: 34, y: 22, class: "chart-scale" }, format(top)),
    s("path", { d: path.join(" "), class: "chart-line" }),
    // Each sample also as a dot, so that a chart of one sample shows it.
    ...points.map(([t, v]) => s("circle", { cx: px(t).toFixed(1), cy: py(v).toFixed(1), r: 2, class: "chart-point" })),
  );
}

/** Replace an element's content (lists flattened, nulls dropped). */
export function fill(element, ...children) {
  element.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}
