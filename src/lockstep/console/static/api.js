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
