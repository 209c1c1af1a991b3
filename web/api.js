// The server's API as the web client calls it: `/json/...`, signed in by the session
// cookie, every change carrying the `csrftoken` cookie's value in `X-CSRFToken` (Zulip's
// rule). Parameters that are not strings are sent as JSON, as Zulip expects them.

/** An error answer of the API: Zulip's `msg`, `code` and HTTP status. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.msg ? body.msg : `The server answered ${status}.`);
    this.status = status;
    this.code = body && body.code ? body.code : null;
    this.body = body || {};
  }
}

/** The value of a cookie (the CSRF token the page must echo). */
export function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return "";
}

function encode(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Calls `method path` with `params`; the reply's data, or an `ApiError`. A network failure
 * is an `ApiError` with status 0.
 */
export async function call(method, path, params = {}, options = {}) {
  const url = new URL(`/json${path}`, location.origin);
  const init = { method, credentials: "same-origin", headers: { "X-CSRFToken": cookie("csrftoken") }, signal: options.signal };
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null);
  if (method === "GET" || method === "HEAD") {
    for (const [key, value] of entries) url.searchParams.set(key, encode(value));
  } else if (entries.length > 0) {
    init.body = new URLSearchParams(entries.map(([key, value]) => [key, encode(value)]));
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, { msg: "The server cannot be reached." });
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    throw new ApiError(response.status, { msg: `The server answered ${response.status}.` });
  }
  if (!response.ok || data.result !== "success") throw new ApiError(response.status, data);
  return data;
}

export const get = (path, params, options) => call("GET", path, params, options);
export const post = (path, params, options) => call("POST", path, params, options);
export const patch = (path, params, options) => call("PATCH", path, params, options);
export const del = (path, params, options) => call("DELETE", path, params, options);

/**
 * Uploads a file (`POST /json/user_uploads`), telling `progress(fraction)` as it goes;
 * resolves to `{url, filename}`.
 */
export function upload(file, progress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open("POST", "/json/user_uploads");
    request.setRequestHeader("X-CSRFToken", cookie("csrftoken"));
    request.responseType = "json";
    request.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) progress(event.loaded / event.total);
    });
    request.addEventListener("load", () => {
      const body = request.response;
      if (request.status === 200 && body && body.result === "success") resolve(body);
      else reject(new ApiError(request.status, body));
    });
    request.addEventListener("error", () => reject(new ApiError(0, { msg: "The upload failed: the server cannot be reached." })));
    const form = new FormData();
    form.append("file", file, file.name);
    request.send(form);
  });
}

/** Sends one file as multipart (`POST`), as avatars and icons are sent. */
export async function postFile(path, file) {
  const form = new FormData();
  form.append("file", file, file.name);
  let response;
  try {
    response = await fetch(`/json${path}`, { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": cookie("csrftoken") }, body: form });
  } catch {
    throw new ApiError(0, { msg: "The server cannot be reached." });
  }
  const data = await response.json().catch(() => null);
  if (!response.ok || !data || data.result !== "success") throw new ApiError(response.status, data);
  return data;
}

/** Signs out (the server ends the session), forgets what this browser kept for the user
 * (`forget`, the keys of its local storage), and goes to the sign-in page. */
export async function signOut(forget = []) {
  for (const key of forget) {
    try {
      localStorage.removeItem(key);
    } catch {
      // Nothing kept.
    }
  }
  try {
    await fetch("/accounts/logout/", { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": cookie("csrftoken") } });
  } finally {
    location.assign("/login/");
  }
}
