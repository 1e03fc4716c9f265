// Calls to lockstep's API with the signed-in token (kept in sessionStorage, never a cookie),
// and streams read with fetch(): EventSource cannot send an Authorization header. A user's
// access token is renewed with their refresh token (also in sessionStorage) when refused.
const TOKEN = "lockstep.token";
const REFRESH = "lockstep.refresh";

export const token = () => sessionStorage.getItem(TOKEN);
export const signedIn = () => token() !== null;
export function signOut() {
  sessionStorage.removeItem(TOKEN);
  sessionStorage.removeItem(REFRESH);
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function grant(request) {
  const response = await fetch("/api/v1/token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(request),
    credentials: "omit",
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  sessionStorage.setItem(TOKEN, body.accessToken);
  if (body.refreshToken) sessionStorage.setItem(REFRESH, body.refreshToken);
}

/** An application signs in with its client id and secret. */
export const signIn = (clientId, clientSecret) =>
  grant({ grantType: "client_credentials", clientId, clientSecret });

/** A person signs in with their email and password. */
export const signInUser = (username, password) =>
  grant({ grantType: "password", username, password });

const SSO_STATE = "lockstep.sso.state";

/** The identity providers one may sign in with: [{alias}]. */
export async function providers() {
  const response = await fetch("/sso", { credentials: "omit" });
  return response.ok ? response.json() : [];
}

/** A person signs in through an identity provider: the browser goes to it, and comes back
 * to the console with a one-time code (see `finishSignIn`). */
export function signInWith(alias) {
  const state = crypto.randomUUID();
  sessionStorage.setItem(SSO_STATE, state);
  const query = new URLSearchParams({ redirect_uri: "/console/", state });
  window.location.assign(`/sso/${encodeURIComponent(alias)}/sign-in?${query}`);
}

/** Back from an identity provider: trade the one-time code for tokens. Resolves to null when
 * the page was not opened by a sign-in, else to an error message or "" on success. */
export async function finishSignIn() {
  const query = new URLSearchParams(window.location.search);
  if (!query.has("code") && !query.has("error")) return null;
  const expected = sessionStorage.getItem(SSO_STATE);
  sessionStorage.removeItem(SSO_STATE);
  window.history.replaceState(null, "", "/console/#/workloads");
  if (!expected || query.get("state") !== expected) return "the sign-in was not begun here";
  if (query.has("error")) return query.get("error_description") || query.get("error");
  try {
    await grant({ grantType: "exchange_token", code: query.get("code"), redirectUri: "/console/" });
    return "";
  } catch (failure) {
    return failure.message;
  }
}

/** The signed-in user's id and email, read from their token; null for an application. */
export function me() {
  const claims = JSON.parse(atob(token().split(".")[1]));
  return claims.typ === "user" ? { id: claims.uid, email: claims.sub } : null;
}

/** A new access token for the signed-in user; false when there is no refresh token or it is
 * refused (signed out, expired). */
async function renewed() {
  const refreshToken = sessionStorage.getItem(REFRESH);
  if (!refreshToken) return false;
  try {
    await grant({ grantType: "refresh_token", refreshToken });
    return true;
  } catch {
    return false;
  }
}

function headers(extra) {
  return { Authorization: `Bearer ${token()}`, ...extra };
}

async function send(method, path, body, signal, renewing = true) {
  const init = { method, headers: headers(), credentials: "omit", signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401 && renewing && await renewed()) {
    return send(method, path, body, signal, false);
  }
  if (response.status === 401) {
    signOut();
    window.location.hash = "#/signin";
  }
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

export const get = (path, signal) => send("GET", path, undefined, signal);
export const post = (path, body) => send("POST", path, body);
export const remove = (path) => send("DELETE", path);
export { send };

async function* chunks(path, signal) {
  const response = await fetch(path, { headers: headers(), credentials: "omit", signal });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new ApiError(response.status, body);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  while (true) {
    const { value, done } = await reader.read();
    if (done) return;
    yield value;
  }
}

/** Text as it is written (a pod's logs with follow=true). */
export async function follow(path, signal, onText) {
  for await (const text of chunks(path, signal)) onText(text);
}

/** Server-sent events: onEvent(name, data) for each; comments (heartbeats) are skipped. */
export async function events(path, signal, onEvent) {
  let buffer = "";
  for await (const text of chunks(path, signal)) {
    buffer += text;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}
