// The console's entry: sign-in, the hash routes, and the status line.
import * as api from "./api.js";
import { field, h } from "./dom.js";
import { nodesPage, projectsPage } from "./org.js";
import { submitPage } from "./submit.js";
import { accessPage } from "./access.js";
import { usersPage } from "./users.js";
import { workloadPage } from "./workload.js";
import { workloadsPage } from "./workloads.js";

const view = document.getElementById("view");
const status = document.getElementById("status");
let current = new AbortController();

function say(text, isError = false) {
  status.textContent = text;
  status.className = isError ? "error" : "";
}

const SIGN_IN_AS = {
  user: {
    label: "User",
    fields: [
      ["Email", { id: "username", name: "username", type: "email", autocomplete: "username" }],
      ["Password", { id: "password", name: "password", type: "password", autocomplete: "current-password" }],
    ],
    signIn: api.signInUser,
  },
  application: {
    label: "Application",
    fields: [
      ["Application client id", { id: "client-id", name: "clientId", type: "text", autocomplete: "username" }],
      ["Client secret", { id: "client-secret", name: "clientSecret", type: "password", autocomplete: "current-password" }],
    ],
    signIn: api.signIn,
  },
};

function signInPage(as = "user", problem = "") {
  const kind = SIGN_IN_AS[as];
  const inputs = kind.fields.map(([, attributes]) => h("input", { ...attributes, required: true }));
  const error = h("p", { class: "error", id: "sign-in-error", role: "alert" });
  if (problem) error.textContent = `Sign-in failed: ${problem}`;
  const providers = h("p", { class: "choices", id: "providers" });
  api.providers().then((found) => providers.replaceChildren(...found.map(({ alias }) =>
    h("button", { type: "button", id: `sso-${alias}`, onclick: () => api.signInWith(alias) },
      `Sign in with ${alias}`))));
  const choices = Object.entries(SIGN_IN_AS).map(([name, other]) =>
    h("button", { type: "button", id: `as-${name}`, "aria-pressed": String(name === as),
      onclick: () => signInPage(name) }, other.label));
  const form = h("form", { class: "signin", id: "sign-in", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await kind.signIn(...inputs.map((input) => input.value));
      window.location.hash = "#/workloads";
    } catch (failure) {
      error.textContent = `Sign-in failed: ${failure.message}`;
    }
  } },
  h("h1", { text: "Sign in" }),
  h("p", { class: "choices", role: "group", "aria-label": "Sign in as" }, choices),
  kind.fields.map(([label], index) => field(label, inputs[index])),
  h("button", { type: "submit" }, "Sign in"), providers, error);
  view.replaceChildren(form);
  inputs[0].focus();
}

const ROUTES = [
  [/^#\/workloads\/([^/]+)$/, (signal, id) => workloadPage(view, signal, say, decodeURIComponent(id))],
  [/^#\/workloads$/, (signal) => workloadsPage(view, signal, say)],
  [/^#\/projects$/, (signal) => projectsPage(view, signal)],
  [/^#\/nodes$/, (signal) => nodesPage(view, signal)],
  [/^#\/submit$/, (signal) => submitPage(view, signal, say)],
  [/^#\/users$/, (signal) => usersPage(view, signal, say)],
  [/^#\/access$/, (signal) => accessPage(view, signal, say)],
];

async function route() {
  current.abort();
  current = new AbortController();
  const hash = window.location.hash || "#/workloads";
  document.getElementById("nav").hidden = !api.signedIn();
  if (!api.signedIn() || hash === "#/signin") {
    if (api.signedIn()) window.location.hash = "#/workloads";
    else signInPage();
    return;
  }
  const match = ROUTES.map(([pattern, page]) => [hash.match(pattern), page]).find(([m]) => m);
  if (!match) {
    window.location.hash = "#/workloads";
    return;
  }
  const [found, page] = match;
  view.replaceChildren(h("p", { text: "Loading…" }));
  try {
    await page(current.signal, ...found.slice(1));
  } catch (error) {
    if (!current.signal.aborted) view.replaceChildren(h("p", { class: "error", text: error.message }));
  }
}

document.getElementById("sign-out").addEventListener("click", () => {
  api.signOut();
  window.location.hash = "#/signin";
  route();
});
window.addEventListener("hashchange", route);
api.finishSignIn().then((problem) => {
  if (!problem) return route();
  document.getElementById("nav").hidden = true;
  return signInPage("user", problem);
});
