// The documented API, same origin. The service authenticates the page by its `corral_auth`
// cookie (sent because credentials are same-origin); mutations carry a JSON content type.

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.type = body && body.type;
    this.detail = body && body.detail;
  }
}

export async function api(method, path, body, { keepalive = false } = {}) {
  const init = {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    keepalive, // lets a last save finish while the page unloads
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, { error: `corral is not reachable (${err.message})`, type: "network" });
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { error: text.slice(0, 200) };
    }
  }
  if (!response.ok) {
    if (response.status === 401) document.dispatchEvent(new CustomEvent("corral:unauthorized"));
    throw new ApiError(response.status, data);
  }
  return data;
}

export const get = (path) => api("GET", path);
export const post = (path, body = {}) => api("POST", path, body);
export const put = (path, body, opts) => api("PUT", path, body, opts);
export const patch = (path, body) => api("PATCH", path, body);

/** Base64 of an ArrayBuffer (attachments travel as base64 in JSON `data`). */
export function toBase64(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
