// Who the page acts as. Locally: the admin token, typed once per tab and kept in
// sessionStorage. With a google-client-id meta: a Google ID token from google_signin.js.
// The credential only ever travels in the Authorization header (see api.js).
import { el } from "./ui.js";

const KEY = "composer.admin-token";
let google = null; // the Google ID token, kept in memory only
let pending = null;

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

// Drops the credential (the API refused it) and shows the sign-in form again.
export function forget() {
  google = null;
  sessionStorage.removeItem(KEY);
  bearer();
}

async function ask() {
  const section = document.getElementById("signin");
  section.hidden = false;
  section.replaceChildren();
  try {
    const id = clientId();
    if (id) {
      const { googleCredential } = await import("./google_signin.js");
      google = await googleCredential(id, section);
      return google;
    }
    const token = await askToken(section);
    sessionStorage.setItem(KEY, token);
    return token;
  } finally {
    section.hidden = true;
    section.replaceChildren();
  }
}

function askToken(section) {
  const input = el("input", {
    id: "admin-token",
    name: "token",
    type: "password",
    required: true,
    autocomplete: "off",
    "aria-describedby": "token-hint",
  });
  const form = el(
    "form",
    {},
    el("h2", {}, "Sign in"),
    el("p", { id: "token-hint" }, "Paste the admin token (ADMIN_TOKEN; make run prints it). ",
      "It is kept for this tab only."),
    el("label", { for: "admin-token" }, "Admin token"),
    input,
    el("button", { type: "submit" }, "Sign in"),
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
