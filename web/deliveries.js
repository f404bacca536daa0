// One message's delivery history: every ledger entry (GET /messages/{id}/deliveries), newest
// occurrence first, with its status, attempt, lateness and reason.
import { api } from "./api.js";
import { failureWords } from "./names.js";
import { showResponses } from "./responses.js";
import { viewerZone } from "./time.js";
import { el, formatInstant, notice } from "./ui.js";

export async function showDeliveries(container, message, cursor = null) {
  const query = cursor ? `?limit=50&cursor=${encodeURIComponent(cursor)}` : "?limit=50";
  const path = `/messages/${encodeURIComponent(message.id)}/deliveries${query}`;
  const answer = await api("GET", path);
  if (answer.status !== 200) {
    const box = el("div", { class: "notice" });
    notice(box, `History unavailable: ${answer.data?.message ?? answer.status}`, { alert: true });
    container.replaceChildren(box);
    return;
  }
  const { deliveries, next_cursor: next } = answer.data;
  if (!cursor) container.replaceChildren();
  container.querySelector(".more")?.remove();
  if (!deliveries.length && !cursor) {
    container.append(el("p", {}, "Nothing was delivered yet."));
    return;
  }
  let body = container.querySelector("tbody");
  if (!body) {
    body = el("tbody", {});
    container.append(el("div", { class: "scroll" }, table(message, body)));
  }
  body.append(...deliveries.map((entry) => row(entry, message)));
  // After the deliveries' table, so that `tbody` above stays theirs.
  if (!cursor) await showResponses(container, message);
  if (next) {
    const more = el("button", { type: "button", class: "more" }, "Older deliveries");
    more.addEventListener("click", () => showDeliveries(container, message, next));
    container.append(more);
  }
}

// The message's timezone; a message stored without one runs in UTC.
function zoneOf(message) {
  return message.timezone ?? "UTC";
}

function table(message, body) {
  const headings = ["Occurrence", "Status", "Attempt", "Lateness", "Reason"];
  const caption = `Delivery history: each occurrence first in ${zoneOf(message)} (the message's `
    + `timezone), then in yours (${viewerZone()})`;
  return el(
    "table",
    { class: "history" },
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, headings.map((text) => el("th", { scope: "col" }, text)))),
    body,
  );
}

function row(entry, message) {
  const zone = zoneOf(message);
  const when = entry.occurrence_at;
  const cells = {
    Occurrence: [formatInstant(when, zone), el("br"), `yours: ${formatInstant(when)}`],
    Status: el("span", { class: `status status-${entry.status}` }, entry.status),
    Attempt: String(entry.attempts ?? "—"),
    Lateness: lateness(when, entry.sent_at),
    Reason: entry.reason ?? helpText(entry.error, message) ?? "—",
  };
  return el(
    "tr",
    {},
    Object.entries(cells).map(([label, value]) => el("td", { "data-label": label }, value)),
  );
}

// A failed entry's error in the catalog's words when the API gives them (`error.help`).
function helpText(error, message) {
  if (!error) return null;
  if (!error.help) return error.message ?? error.code;
  const { title, action } = failureWords({ ...message, last_error: error });
  return [title, action].filter(Boolean).join(". ");
}

// How long after its occurrence an entry was sent: "on time" within a minute.
export function lateness(occurrence, sent) {
  if (!occurrence || !sent) return "—";
  const seconds = Math.round((new Date(sent) - new Date(occurrence)) / 1000);
  if (seconds < 60) return "on time";
  if (seconds < 3600) return `${Math.round(seconds / 60)} min late`;
  const hours = Math.floor(seconds / 3600);
  return `${hours} h ${Math.round((seconds % 3600) / 60)} min late`;
}
