// Who the page acts as. Locally: the admin token, typed once per tab and kept in
// sessionStorage. With a google-client-id meta: a Google ID token from google_signin.js.
// The credential only ever travels in the Authorization header (see api.js).
//
// Two states, never both at once: signed in (the sections), or signing in (only the sign-in
// form; the header's navigation, Sign out and every section are hidden, and kept as they
// are, a half-typed draft too, for when the credential is accepted). A refused credential
// (401) brings the form back with the API's message at its top, beside the token field.
import { el } from "./ui.js";

const KEY = "composer.admin-token";
// What the page hides while it asks for a credential (and shows again afterwards).
const APP = "header nav, #sign-out, main > section:not(#signin)";
let google = null; // the Google ID token, kept in memory only
let pending = null;
let refused = null; // the message of the last 401, shown on the form until the next sign-in

function clientId() {
  return document.querySelector('meta[name="google-client-id"]')?.content || null;
}

// A Promise of the credential; asks for one (once, however many callers wait) when none is kept.
export function bearer() {
  const kept = clientId() ? google : sessionStorage.getItem(KEY);
  if (kept) return Promise.resolve(kept);
  pending ??= ask().finally(() => {
    pending = null;
  });
  return pending;
}

// Resolves once the page holds a credential the API accepts: a kept one is tried first, and
// the page's sections are shown only after it answered anything but 401.
export async function signIn() {
  for (;;) {
    const credential = await bearer();
    const answer = await probe(credential);
    if (answer.status !== 401) return;
    forget(answer.message);
  }
}

// Drops the credential (the API refused it, saying `message`; or Sign out) and shows the
// sign-in form again.
export function forget(message = null) {
  google = null;
  refused = message;
  sessionStorage.removeItem(KEY);
  bearer();
}

async function probe(credential) {
  const url = new URL("categories", document.baseURI);
  try {
    const response = await fetch(url, {
      headers: { Accept: "application/json", Authorization: `Bearer ${credential}` },
      credentials: "omit",
      cache: "no-store",
    });
    const data = await response.json().catch(() => null);
    return { status: response.status, message: data?.message ?? null };
  } catch {
    return { status: 0, message: null }; // unreachable: the sections say so on their calls
  }
}

function hideApp(hide) {
  for (const node of document.querySelectorAll(APP)) {
    if (hide && node.dataset.shown === undefined) {
      node.dataset.shown = String(!node.hidden);
      node.hidden = true;
    } else if (!hide && node.dataset.shown !== undefined) {
      node.hidden = node.dataset.shown !== "true";
      delete node.dataset.shown;
    }
  }
}

async function ask() {
  const section = document.getElementById("signin");
  hideApp(true);
  section.hidden = false;
  section.replaceChildren();
  const problem = refused === null ? null : el("p", { id: "signin-error", class: "problem", role: "alert" },
    `Not signed in: the API refused the credential (${refused}). Sign in again.`);
  try {
    const id = clientId();
    if (id) {
      if (problem) section.append(problem);
      const { googleCredential } = await import("./google_signin.js");
      google = await googleCredential(id, section);
      return google;
    }
    const token = await askToken(section, problem);
    sessionStorage.setItem(KEY, token);
    return token;
  } finally {
    refused = null;
    section.hidden = true;
    section.replaceChildren();
    hideApp(false);
  }
}

// The form, its error (if any) at the top: right above the field it is about, which gets the
// focus and names the error as its description.
function askToken(section, problem) {
  const input = el("input", {
    id: "admin-token",
    name: "token",
    type: "password",
    required: true,
    autocomplete: "off",
    "aria-describedby": problem ? "signin-error token-hint" : "token-hint",
    "aria-invalid": problem ? "true" : null,
  });
  const form = el(
    "form",
    {},
    el("h2", {}, "Sign in"),
    problem,
    el("label", { for: "admin-token" }, "Admin token"),
    input,
    el("button", { type: "submit" }, "Sign in"),
    el("p", { id: "token-hint", class: "hint" },
      "Paste the admin token (ADMIN_TOKEN; make run prints it, and keeps it across restarts). ",
      "It is kept for this tab only."),
  );
  section.append(form);
  input.focus();
  return new Promise((resolve) => {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (input.value.trim()) resolve(input.value.trim());
    });
  });
}
