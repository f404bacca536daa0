// The JSON API, as the page calls it: never throws on an HTTP status, answers
// {status, data, etag}. The credential goes in the Authorization header only.
import { bearer, forget } from "./signin.js";

export async function api(method, path, { body, ifMatch, idempotencyKey } = {}) {
  const headers = { Accept: "application/json", Authorization: `Bearer ${await bearer()}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch !== undefined && ifMatch !== null) headers["If-Match"] = String(ifMatch);
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  // Relative to the page, so the API is found wherever the target is mounted.
  const url = new URL(path.replace(/^\//, ""), document.baseURI);
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (error) {
    const message = `the server could not be reached (${error.message})`;
    return { status: 0, data: { error: "network", message, details: [] }, etag: null };
  }
  const data = await response.json().catch(() => null);
  if (response.status === 401) forget(data?.message ?? "401");
  return { status: response.status, data, etag: response.headers.get("ETag") };
}
