// REST calls for the studio: session cookie + CSRF token from the cookie; JSON in and out.

import { t } from "./i18n.js";

function cookie(name) {
  const match = document.cookie.split("; ").find((part) => part.startsWith(`${name}=`));
  return match ? decodeURIComponent(match.slice(name.length + 1)) : "";
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || t("Request failed ({status})", { status }));
    this.status = status;
    this.code = error.code || "";
    this.details = error.details || {};
  }
}

export async function request(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["X-CSRFToken"] = cookie("csrftoken");
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/** The text of one artifact version (documents and Flows are served as text). */
export async function fetchText(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new ApiError(response.status, null);
  return response.text();
}

/**
 * A multipart upload with its progress: `onProgress(fraction)` as the bytes go out (fetch cannot report that).
 * Resolves with the JSON answer; rejects with an ApiError carrying the API's code and message.
 */
export function upload(path, form, { onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.withCredentials = true;
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-CSRFToken", cookie("csrftoken"));
    if (onProgress) {
      xhr.upload.onprogress = (event) => {
        if (event.lengthComputable) onProgress(event.loaded / event.total);
      };
    }
    xhr.onload = () => {
      let data = null;
      try { data = xhr.responseText ? JSON.parse(xhr.responseText) : null; } catch { data = null; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, data));
    };
    xhr.onerror = () => reject(new ApiError(0, { error: { message: t("The upload could not reach the server.") } }));
    xhr.send(form); // the browser sets the multipart Content-Type with its boundary
  });
}

export function workspaceApi(workspaceId) {
  const base = `/api/v1/workspaces/${workspaceId}`;
  return {
    base,
    get: (path) => request(base + path),
    post: (path, body) => request(base + path, { method: "POST", body: body || {} }),
    put: (path, body) => request(base + path, { method: "PUT", body }),
    patch: (path, body) => request(base + path, { method: "PATCH", body }),
    del: (path) => request(base + path, { method: "DELETE" }),
    upload: (path, form, options) => upload(base + path, form, options),
  };
}
