// The users page: an administrator lists users, creates one (its one-time password shown once),
// resets a password, signs a user out and deletes one; a signed-in user changes their own
// password. Whoever may not manage users is told so (the API answers 403).
import * as api from "./api.js";
import { age, field, fill, h, table } from "./dom.js";
import { confirmed } from "./workloads.js";

function oneTimePassword(email, password) {
  return h("p", { class: "notice", id: "one-time-password" },
    `One-time password of ${email}, shown only now: `, h("code", { text: password }));
}

function ownPassword(say) {
  const me = api.me();
  if (me === null) return null;
  const current = h("input", { id: "current-password", type: "password", autocomplete: "current-password", required: true });
  const next = h("input", { id: "new-password", type: "password", autocomplete: "new-password", required: true });
  return h("form", { id: "change-password", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api.post("/api/v1/me/password", { currentPassword: current.value, newPassword: next.value });
      api.signOut();
      window.location.hash = "#/signin";
      say("password changed: sign in with the new one");
    } catch (error) {
      say(`the password was not changed: ${error.message}`, true);
    }
  } },
  h("h2", { text: `Your password (${me.email})` }),
  field("Current password", current), field("New password", next),
  h("button", { type: "submit" }, "Change password"));
}

function userRow(user, refresh, say, notice) {
  const act = async (what, run) => {
    try {
      await run();
      say(`${what} ${user.username}: done`);
      await refresh();
    } catch (error) {
      say(`${what} ${user.username} failed: ${error.message}`, true);
    }
  };
  const path = `/api/v1/users/${encodeURIComponent(user.id)}`;
  return h("tr", { "data-user": user.username },
    h("td", { text: user.username }),
    h("td", { text: user.isLocal ? "local" : "single sign-on" }),
    h("td", { text: age(user.createdAt), title: user.createdAt }),
    h("td", { text: user.lastLogin ? `${age(user.lastLogin)} ago` : "never", title: user.lastLogin || "" }),
    h("td", {},
      h("button", { type: "button", class: "reset", onclick: () => act("reset the password of", async () => {
        const reset = await api.post(`${path}/password`);
        notice(oneTimePassword(user.username, reset.tempPassword));
      }) }, "Reset password"),
      h("button", { type: "button", class: "sign-out", onclick: () => act("signed out", () => api.post(`${path}/logout`)) }, "Sign out"),
      h("button", { type: "button", class: "delete", onclick: async () => {
        if (await confirmed(`Delete user ${user.username}?`)) await act("deleted", () => api.remove(path));
      } }, "Delete")));
}

export async function usersPage(view, signal, say) {
  const notices = h("div", { id: "notices" });
  const notice = (element) => notices.replaceChildren(element);
  const rows = h("tbody");
  let allowed = true;
  const refresh = async () => {
    try {
      const users = await api.get("/api/v1/users?sortBy=username", signal);
      rows.replaceChildren(...users.map((u) => userRow(u, refresh, say, notice)));
    } catch (error) {
      if (error.status !== 403) throw error;
      allowed = false;
    }
  };
  await refresh();
  const own = ownPassword(say);
  if (!allowed) {
    fill(view, h("h1", { text: "Users" }),
      h("p", { id: "not-allowed", text: "Only a System administrator manages users." }), own);
    return;
  }
  const email = h("input", { id: "new-user-email", type: "email", required: true });
  const create = h("form", { id: "create-user", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const created = await api.post("/api/v1/users", { email: email.value });
      notice(oneTimePassword(created.username, created.tempPassword));
      email.value = "";
      await refresh();
    } catch (error) {
      say(`the user was not created: ${error.message}`, true);
    }
  } }, field("Email", email), h("button", { type: "submit" }, "Create user"));
  const listing = table(["User", "Kind", "Age", "Last sign-in", ""], []);
  listing.querySelector("tbody").replaceWith(rows);
  listing.id = "users";
  fill(view, h("h1", { text: "Users" }), create, notices, listing, own);
}
