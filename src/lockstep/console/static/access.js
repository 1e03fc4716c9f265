// The access page: everyone sees their own access rules; whoever may read access rules sees
// those of their scopes, and grants and revokes them (the API refuses what they may not);
// an administrator also manages service accounts (a new secret shown once).
import * as api from "./api.js";
import { age, field, fill, h, table } from "./dom.js";
import { confirmed } from "./workloads.js";

const SUBJECT_TYPES = ["user", "group", "service-account", "app"];
const SCOPE_TYPES = ["project", "department", "cluster", "system"];

function ruleRow(rule, refresh, say) {
  const revoke = rule.deletedAt ? null : h("button", { type: "button", class: "revoke", onclick: async () => {
    if (!(await confirmed(`Revoke ${rule.roleName} of ${rule.subjectId} in ${rule.scopeName}?`))) return;
    try {
      await api.remove(`/api/v1/authorization/access-rules/${rule.id}`);
      say(`revoked rule ${rule.id}: done`);
      await refresh();
    } catch (error) {
      say(`rule ${rule.id} was not revoked: ${error.message}`, true);
    }
  } }, "Revoke");
  return h("tr", { "data-rule": String(rule.id) },
    h("td", { text: `${rule.subjectType} ${rule.subjectId}` }),
    h("td", { text: rule.roleName }),
    h("td", { text: `${rule.scopeType} ${rule.scopeName}` }),
    h("td", { text: age(rule.createdAt), title: rule.createdAt }),
    h("td", {}, revoke));
}

function grantForm(roles, refresh, say) {
  const options = (values) => values.map((v) => h("option", { value: v }, v));
  const subjectType = h("select", { id: "grant-subject-type" }, options(SUBJECT_TYPES));
  const subjectId = h("input", { id: "grant-subject-id", type: "text", required: true });
  const role = h("select", { id: "grant-role" }, roles.map((r) => h("option", { value: String(r.id) }, r.name)));
  const scopeType = h("select", { id: "grant-scope-type" }, options(SCOPE_TYPES));
  const scopeId = h("input", { id: "grant-scope-id", type: "text", required: true });
  return h("form", { id: "grant", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const created = await api.post("/api/v1/authorization/access-rules", {
        subjectType: subjectType.value, subjectId: subjectId.value, roleId: Number(role.value),
        scopeType: scopeType.value, scopeId: scopeType.value === "system" ? "system" : scopeId.value,
      });
      say(`granted rule ${created.id}: done`);
      await refresh();
    } catch (error) {
      say(`nothing was granted: ${error.message}`, true);
    }
  } }, h("h2", { text: "Grant a role" }),
  field("Subject type", subjectType), field("Subject (email, group, client id)", subjectId),
  field("Role", role), field("Scope type", scopeType), field("Scope id", scopeId),
  h("button", { type: "submit" }, "Grant"));
}

function accountRow(account, refresh, say, notice) {
  const path = `/api/v1/service-accounts/${encodeURIComponent(account.id)}`;
  const act = async (what, run) => {
    try {
      await run();
      say(`${what} ${account.name}: done`);
      await refresh();
    } catch (error) {
      say(`${what} ${account.name} failed: ${error.message}`, true);
    }
  };
  return h("tr", { "data-account": account.name },
    h("td", { text: account.name }),
    h("td", { text: account.enabled ? "enabled" : "disabled" }),
    h("td", { text: account.lastLogin ? `${age(account.lastLogin)} ago` : "never" }),
    h("td", {},
      h("button", { type: "button", class: "toggle", onclick: () => act(account.enabled ? "disabled" : "enabled",
        () => api.send("PATCH", path, { enabled: !account.enabled })) }, account.enabled ? "Disable" : "Enable"),
      h("button", { type: "button", class: "regenerate", onclick: () => act("new secret for", async () => {
        const made = await api.post(`${path}/secret`);
        notice(secretNotice(account.clientId, made.clientSecret));
      }) }, "New secret"),
      h("button", { type: "button", class: "delete", onclick: async () => {
        if (await confirmed(`Delete service account ${account.name}?`)) await act("deleted", () => api.remove(path));
      } }, "Delete")));
}

function secretNotice(clientId, secret) {
  return h("p", { class: "notice", id: "client-secret" },
    `Secret of ${clientId}, shown only now: `, h("code", { text: secret }));
}

async function accountsSection(signal, say) {
  const rows = h("tbody");
  const notices = h("div", { id: "account-notices" });
  const notice = (element) => notices.replaceChildren(element);
  const refresh = async () => {
    const accounts = await api.get("/api/v1/service-accounts", signal);
    rows.replaceChildren(...accounts.map((a) => accountRow(a, refresh, say, notice)));
  };
  await refresh();
  const name = h("input", { id: "new-account-name", type: "text", required: true });
  const create = h("form", { id: "create-account", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const created = await api.post("/api/v1/service-accounts", { name: name.value });
      notice(secretNotice(created.clientId, created.clientSecret));
      name.value = "";
      await refresh();
    } catch (error) {
      say(`the service account was not created: ${error.message}`, true);
    }
  } }, field("Name", name), h("button", { type: "submit" }, "Create service account"));
  const listing = table(["Service account", "State", "Last sign-in", ""], []);
  listing.querySelector("tbody").replaceWith(rows);
  listing.id = "service-accounts";
  return h("section", {}, h("h2", { text: "Service accounts" }), create, notices, listing);
}

export async function accessPage(view, signal, say) {
  const mine = await api.get("/api/v1/authorization/me/access-rules", signal);
  const own = table(["Subject", "Role", "Scope"],
    mine.accessRules.accessRules.map((r) => h("tr", { "data-own-rule": String(r.id) },
      h("td", { text: `${r.subjectType} ${r.subjectId}` }), h("td", { text: r.roleName }),
      h("td", { text: `${r.scopeType} ${r.scopeName}` }))));
  own.id = "own-rules";
  const held = await api.get("/api/v1/authorization/permissions", signal);
  const mayGrant = held.some((p) => p.resourceType === "access_rules" && p.actions.includes("create"));
  const mayManageAccounts = held.some((p) => p.resourceType === "apps" && p.actions.includes("read"));
  const sections = [h("h1", { text: "Access" }), h("h2", { text: "Your access rules" }), own];
  if (mayGrant) {
    const rows = h("tbody");
    const refresh = async () => {
      const rules = await api.get("/api/v1/authorization/access-rules?sortBy=createdAt&limit=500", signal);
      rows.replaceChildren(...rules.accessRules.map((r) => ruleRow(r, refresh, say)));
    };
    await refresh();
    const roles = await api.get("/api/v1/authorization/roles", signal);
    const listing = table(["Subject", "Role", "Scope", "Age", ""], []);
    listing.querySelector("tbody").replaceWith(rows);
    listing.id = "access-rules";
    sections.push(h("h2", { text: "Access rules" }), grantForm(roles, refresh, say), listing);
  }
  if (mayManageAccounts) sections.push(await accountsSection(signal, say));
  fill(view, sections);
}
