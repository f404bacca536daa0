// The Messages section: the composer, then the list (filters, paging by cursor) with each
// message's state, next run in its own timezone and the viewer's, actions and history.
import { api } from "./api.js";
import { showDeliveries } from "./deliveries.js";
import { renderMessage } from "./message_detail.js";
import { mountMessageForm } from "./message_form.js";
import { destinationOf, failureWords, nameNode, whoRows, withNames } from "./names.js";
import { namePicker } from "./pickers.js";
import { clearProblems, el, field, formatInstant, notice, showProblems } from "./ui.js";

const FILTERS = [
  ["", "All messages"],
  ["pending,recurring,sending,paused", "Scheduled and in flight"],
  ["sending", "Sending now (in flight)"],
  ["unconfirmed", "Unconfirmed"],
  ["failed", "Failed"],
  ["sent,completed", "Sent and completed"],
  ["paused", "Paused"],
  ["skipped", "Skipped"],
  ["cancelled", "Cancelled"],
];
const EDITABLE = ["pending", "recurring", "paused", "failed"];
const PAGE_SIZE = 20;
const DETAIL = /^#\/messages\/([^/]+)$/;
let mounted = null; // {detail, load}: the section's message detail and list, once mounted

// #/messages/{id}: that message's detail above the list (the router may call this too).
export async function showMessage(id) {
  if (!mounted) return;
  mounted.detail.hidden = false;
  const shown = await renderMessage(mounted.detail, id, () => mounted.load());
  if (shown) mounted.detail.querySelector("#md-heading")?.focus();
}

function followHash() {
  const match = DETAIL.exec(location.hash);
  if (match) showMessage(decodeURIComponent(match[1]));
  else if (mounted) mounted.detail.hidden = true;
}

export function mountMessages(container) {
  const detail = el("div", { class: "detail", hidden: true });
  container.append(detail);
  const composer = mountMessageForm(container, () => load());
  const channelFilter = namePicker({ id: "f-channel", name: "channel", label: "Channel",
    kind: "channels", hint: "A channel's name (or id); empty: every channel" });
  const filters = filterForm(channelFilter.root);
  const summary = el("p", { role: "status", class: "hint" });
  const list = el("ul", { class: "messages", "aria-label": "Messages" });
  const more = el("button", { type: "button", hidden: true }, "More messages");
  container.append(
    el("h2", { id: "m-list-heading" }, "Messages"),
    filters, summary, list, more,
  );
  let cursor = null;
  let shown = 0;

  async function load(next = null) {
    clearProblems(filters);
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    const status = filters.elements.status.value;
    const channel = channelFilter.value()?.id ?? "";
    if (status) query.set("status", status);
    if (channel) query.set("channel", channel);
    if (next) query.set("cursor", next);
    const answer = await api("GET", `/messages?${query}`);
    if (answer.status !== 200) {
      if (answer.status === 422) showProblems(filters, answer);
      else notice(summary, `Could not list messages: ${answer.data?.message ?? answer.status}`);
      return;
    }
    if (!next) {
      list.replaceChildren();
      shown = 0;
    }
    list.append(...answer.data.messages.map((message) => item(message)));
    shown += answer.data.messages.length;
    cursor = answer.data.next_cursor;
    more.hidden = !cursor;
    summary.textContent = `${shown} message${shown === 1 ? "" : "s"} shown${cursor ? "; more below" : ""}.`;
  }

  function item(message) {
    const history = el("div", { id: `history-${message.id}`, class: "deliveries", hidden: true });
    const status = el("div", { class: "notice", hidden: true });
    const act = (label, run) => el("button", { type: "button", onclick: () => run(status) }, label);
    const actions = [];
    if (EDITABLE.includes(message.status)) actions.push(act("Edit", () => composer.edit(message)));
    if (["pending", "recurring"].includes(message.status)) {
      actions.push(act("Pause", (box) => change(box, "POST", message, "/pause")));
    }
    if (message.status === "paused") {
      actions.push(act("Resume", (box) => change(box, "POST", message, "/resume")));
    }
    if (EDITABLE.includes(message.status)) {
      actions.push(act("Cancel message", (box) => cancel(box, message)));
    }
    const toggle = el("button", {
      type: "button", "aria-expanded": "false", "aria-controls": history.id,
    }, "History");
    toggle.addEventListener("click", () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      history.hidden = !open;
      if (open) showDeliveries(history, message);
    });
    actions.push(toggle);
    actions.push(el("a", { href: `#/messages/${encodeURIComponent(message.id)}` },
      "Details and actions"));
    return el("li", { class: "message", "data-id": message.id },
      el("h3", {}, el("span", { class: `status status-${message.status}` }, message.status), " ",
        nameNode(destinationOf(message), message.names)),
      el("p", { class: "text" }, clip(withNames(message.text ?? "", message.names))),
      el("dl", {}, facts(message)),
      status,
      el("div", { class: "actions" }, actions),
      history);
  }

  async function change(box, method, message, suffix = "") {
    const path = `/messages/${encodeURIComponent(message.id)}${suffix}`;
    const answer = await api(method, path, { ifMatch: message.version });
    if (answer.status === 200) return load();
    if (answer.status === 412) {
      notice(box, "Someone changed this message meanwhile; the list now shows their version.",
        { alert: true });
      return;
    }
    notice(box, `Not done: ${answer.data?.message ?? answer.status}`, { alert: true });
  }

  function cancel(box, message) {
    if (window.confirm("Cancel this message? It will not be sent again.")) {
      change(box, "DELETE", message);
    }
  }

  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  more.addEventListener("click", () => load(cursor));
  mounted = { detail, load: () => load() };
  window.addEventListener("hashchange", followHash);
  followHash();
  load();
}

function filterForm(channel) {
  return el("form", { class: "filters", "aria-label": "Filter messages" },
    field("Status", el("select", { id: "f-status", name: "status" },
      FILTERS.map(([value, label]) => el("option", { value }, label)))),
    channel,
    el("div", { class: "form-problems", hidden: true }),
    el("button", { type: "submit" }, "Show"));
}

// What a person watching this message needs: when it runs (its zone and theirs), what is in
// flight, what failed and why.
function facts(message) {
  const zone = message.timezone ?? "UTC";
  const rows = [["Schedule", scheduleWords(message)]];
  rows.push(...runRows(message, zone));
  if (message.status === "sending" && message.lease?.expires_at) {
    rows.push(["Claim expires", formatInstant(message.lease.expires_at)]);
  }
  const failure = failureWords(message);
  if (failure) {
    const detail = failure.detail ? `(${failure.detail})` : "";
    rows.push(["Reason", [`${failure.title}.`, failure.action, detail].filter(Boolean).join(" ")]);
  }
  if (message.sent_count) {
    rows.push(["Sent", `${message.sent_count} time(s), last ${formatInstant(message.last_sent_at)}`]);
  }
  rows.push(...whoRows(message));
  return rows.flatMap(([term, value]) => [
    el("dt", {}, term),
    el("dd", { class: term === "Reason" ? "reason" : null }, value),
  ]);
}

// The schedule in words (the API's schedule_text), never RRULE syntax.
export function scheduleWords(message) {
  if (message.schedule_text) return message.schedule_text;
  const zone = message.timezone ?? "UTC";
  return message.rrule ? `Repeating (${zone})` : `Once (${zone})`;
}

// When it runs, was due, or is being sent, in its zone and the viewer's. A paused message
// runs nothing until it is resumed (which schedules it from then), so it shows no time; a
// cancelled one shows "Last due" only for an occurrence that came before the cancel (its
// `updated_at`), never one it was cancelled before reaching.
function runRows(message, zone) {
  if (message.status === "paused") return [["Paused", "nothing is sent until it is resumed"]];
  const when = message.lease?.occurrence_at ?? message.next_run_at;
  if (!when) return [];
  const cancelledFirst = message.status === "cancelled"
    && !(message.updated_at && new Date(when) <= new Date(message.updated_at));
  if (cancelledFirst) return [];
  const label = message.status === "sending" ? "Sending occurrence"
    : ["pending", "recurring"].includes(message.status) ? "Next run" : "Last due";
  return [
    [`${label} (${zone})`, formatInstant(when, zone)],
    [`${label} (your time)`, formatInstant(when)],
  ];
}

function clip(text, limit = 280) {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
