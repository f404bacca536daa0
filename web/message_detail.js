// One message at #/messages/{id}: what it is (destination and schedule in words, the next
// occurrence in its zone and the viewer's, a failure in the error catalog's words), the
// actions on one occurrence (send now, skip next, send a test, edit only this occurrence,
// retry a failure) and its history.
import { api } from "./api.js";
import { showDeliveries } from "./deliveries.js";
import { destinationOf, failureWords, nameNode, whoRows, withNames } from "./names.js";
import { namePicker } from "./pickers.js";
import { isZone, wallClock, zonedIso } from "./time.js";
import { el, field, formatInstant, linkStyles, notice, showProblems } from "./ui.js";

const WAITING = ["pending", "recurring"];
let me = null; // GET /me, read once per page

// Renders message `id` into `container` (replacing what was there); answers the message.
export async function renderMessage(container, id, onChanged = () => {}) {
  linkStyles("compose.css");
  const answer = await api("GET", `/messages/${encodeURIComponent(id)}`);
  if (answer.status !== 200) {
    const box = el("div", { class: "notice" });
    notice(box, `Message ${id} could not be read: ${answer.data?.message ?? answer.status}`,
      { alert: true });
    container.replaceChildren(box);
    return null;
  }
  draw(container, answer.data, onChanged);
  return answer.data;
}

function draw(container, message, onChanged) {
  const status = el("div", { class: "notice", hidden: true });
  const extra = el("div", {});
  const history = el("div", { class: "deliveries" });
  const reload = async (text, alert = false) => {
    await renderMessage(container, message.id, onChanged);
    const box = container.querySelector(".detail-status");
    if (box && text) notice(box, text, { alert });
    onChanged();
  };
  const ctx = { message, status, extra, reload };
  status.classList.add("detail-status");
  const heading = el("h2", { id: "md-heading", tabindex: "-1" }, "Message to ",
    nameNode(destinationOf(message), message.names));
  container.replaceChildren(el("section", { class: "message-detail", "aria-labelledby": "md-heading" },
    heading,
    el("p", { class: "text" }, withNames(message.text ?? "", message.names)),
    el("dl", {}, facts(message)),
    help(message),
    el("div", { class: "actions" }, actions(ctx),
      el("a", { href: "#/messages" }, "Back to all messages")),
    status, extra, history));
  showDeliveries(history, message);
}

function facts(message) {
  const zone = message.timezone ?? "UTC";
  const rows = [
    ["Status", el("span", { class: `status status-${message.status}` }, message.status)],
    ["Schedule", message.schedule_text ?? (message.rrule ? `Repeating (${zone})` : `Once (${zone})`)],
  ];
  const next = nextOccurrence(message);
  if (next) {
    rows.push([`Next occurrence (${zone})`, formatInstant(next, zone)]);
    rows.push(["Next occurrence (your time)", formatInstant(next)]);
  }
  if (message.sent_count) {
    rows.push(["Sent", `${message.sent_count} time(s), last ${formatInstant(message.last_sent_at)}`]);
  }
  rows.push(...whoRows(message));
  return rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]);
}

// The occurrence the actions act on: the next one of a waiting message.
function nextOccurrence(message) {
  return WAITING.includes(message.status) ? message.next_run_at : null;
}

function help(message) {
  const failure = failureWords(message);
  if (!failure) return null;
  return el("div", { class: "help", role: "note", "aria-label": "Why it failed" },
    el("p", {}, el("strong", {}, failure.title)),
    failure.action ? el("p", {}, failure.action) : null,
    failure.detail ? el("p", { class: "hint" }, `What it said: ${failure.detail}`) : null);
}

function actions(ctx) {
  const { message } = ctx;
  const button = (label, run) => {
    const node = el("button", { type: "button" }, label);
    node.addEventListener("click", async () => {
      node.disabled = true; // one request per click, however fast the clicks come
      try {
        await run(node);
      } finally {
        node.disabled = false;
      }
    });
    return node;
  };
  const list = [];
  const next = nextOccurrence(message);
  if (next) {
    list.push(button("Send now", () => sendNow(ctx, next)));
    list.push(button("Skip next", () => skipNext(ctx)));
  }
  list.push(button("Send a test to me", () => sendTest(ctx)));
  if (next && message.rrule) {
    list.push(button("Edit only this occurrence", () => editOccurrence(ctx, next)));
  }
  if (message.status === "failed") list.push(button("Retry", () => retry(ctx)));
  return list;
}

const path = (message, suffix) => `/messages/${encodeURIComponent(message.id)}/${suffix}`;
const why = (answer) => answer.data?.message ?? `HTTP ${answer.status}`;

async function sendNow(ctx, occurrence) {
  const { message, status } = ctx;
  notice(status, "Sending…");
  const answer = await api("POST", path(message, "send-now"), { body: { occurrence_at: occurrence } });
  const when = formatInstant(occurrence, message.timezone ?? "UTC");
  if (answer.status === 200) {
    const outcome = { sent: "Sent", sending: "Being sent", skipped: "Skipped", failed: "Failed" };
    const word = outcome[answer.data.status] ?? answer.data.status;
    return ctx.reload(`${word}: the occurrence of ${when}, now.`, answer.data.status === "failed");
  }
  if (answer.status === 409) {
    return ctx.reload(`Not sent again: the occurrence of ${when} was already sent or is no ` +
      `longer the next one (${why(answer)}).`, true);
  }
  notice(status, `Not sent: ${why(answer)}`, { alert: true });
}

async function skipNext(ctx) {
  const { message, status } = ctx;
  const answer = await api("POST", path(message, "skip-next"), { ifMatch: message.version });
  const when = formatInstant(message.next_run_at, message.timezone ?? "UTC");
  if (answer.status === 200) return ctx.reload(`Skipped the occurrence of ${when}.`);
  if (answer.status === 412) {
    return ctx.reload("Someone changed this message meanwhile; this is their version. " +
      "Nothing was skipped.", true);
  }
  notice(status, `Not skipped: ${why(answer)}`, { alert: true });
}

// A DM to the signed-in person (GET /me), or to someone chosen when the page does not know
// who that is (the admin token locally).
async function sendTest(ctx) {
  me ??= await api("GET", "/me");
  const person = me.status === 200 ? me.data?.slack_user : null;
  if (person) return postTest(ctx, person.id, `@${person.real_name || person.name}`);
  const picker = namePicker({ id: "md-test-user", name: "user", label: "Send the test to",
    kind: "users", hint: "The page does not know your Slack account: choose who gets the test" });
  const send = el("button", { type: "submit", class: "primary" }, "Send test");
  const form = el("form", { class: "test-to", novalidate: true }, picker.root,
    el("div", { class: "form-problems", hidden: true }), el("div", { class: "actions" }, send));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = picker.value();
    send.disabled = true;
    try {
      await postTest(ctx, chosen?.id ?? "", picker.input.value, form);
    } finally {
      send.disabled = false;
    }
  });
  ctx.extra.replaceChildren(form);
  picker.input.focus();
}

async function postTest(ctx, user, shown, form = null) {
  const answer = await api("POST", path(ctx.message, "test"), { body: { user } });
  if (answer.status === 200) {
    ctx.extra.replaceChildren();
    return notice(ctx.status, `Test sent to ${shown} as a direct message, marked as a test. ` +
      "It is not counted as an occurrence.");
  }
  if (form && answer.status === 422) return showProblems(form, answer);
  notice(ctx.status, `Test not sent: ${why(answer)}`, { alert: true });
}

// This occurrence only: its own text and time, as a one-off; the series skips it.
function editOccurrence(ctx, occurrence) {
  const { message } = ctx;
  const zone = message.timezone ?? "UTC";
  const local = isZone(zone) ? wallClock(occurrence, zone) : occurrence.slice(0, 16);
  const [date, time] = local.split("T");
  const text = el("textarea", { id: "md-occ-text", name: "text", rows: "4" }, message.text ?? "");
  const dateInput = el("input", { id: "md-occ-date", type: "date", value: date, "data-field": "send_at" });
  const timeInput = el("input", { id: "md-occ-time", type: "time", value: time });
  const save = el("button", { type: "submit", class: "primary" }, "Save this occurrence");
  const cancel = el("button", { type: "button" }, "Keep it as it is");
  const form = el("form", { class: "occurrence-edit", novalidate: true,
    "aria-label": `Only the occurrence of ${formatInstant(occurrence, zone)}` },
  el("p", {}, `Only the occurrence of ${formatInstant(occurrence, zone)} changes; the rest ` +
    "of the series stays as it is."),
  field("Text of this occurrence", text),
  el("div", { class: "when-row" }, field("Date", dateInput), field("Time", timeInput,
    `In ${zone}`)),
  el("div", { class: "form-problems", hidden: true }),
  el("div", { class: "actions" }, save, cancel));
  cancel.addEventListener("click", () => ctx.extra.replaceChildren());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const wall = `${dateInput.value}T${timeInput.value}`;
    const body = { occurrence_at: occurrence, text: text.value };
    if (dateInput.value && timeInput.value) body.send_at = isZone(zone) ? zonedIso(wall, zone) : `${wall}:00Z`;
    save.disabled = true;
    const answer = await api("POST", path(message, "occurrence"), { body });
    save.disabled = false;
    if (answer.status === 201) {
      const id = answer.data.message.id;
      return ctx.reload(`That occurrence is now its own message (${id}), sent ` +
        `${formatInstant(answer.data.message.send_at, zone)}; the series skips it.`);
    }
    if (answer.status === 422) return showProblems(form, answer);
    notice(ctx.status, `Not changed: ${why(answer)}`, { alert: true });
  });
  ctx.extra.replaceChildren(form);
  text.focus();
}

async function retry(ctx) {
  const { message, status } = ctx;
  notice(status, "Retrying…");
  const answer = await api("POST", path(message, "retry"));
  if (answer.status === 200) {
    const again = answer.data.status === "failed";
    return ctx.reload(again ? "Retried; it failed again (see why above)." : "Retried.", again);
  }
  notice(status, `Not retried: ${why(answer)}`, { alert: true });
}
