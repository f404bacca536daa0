// Creating and editing a message: the form, its live preview (POST /preview, debounced) and
// the save (POST /messages with an Idempotency-Key, or PUT with If-Match = the version read).
import { api } from "./api.js";
import { renderMrkdwn } from "./mrkdwn.js";
import { loadCategories } from "./people.js";
import { namePicker } from "./pickers.js";
import { mountRecurrence } from "./recurrence.js";
import { viewerZone } from "./time.js";
import { timezoneField } from "./timezones.js";
import { clearProblems, el, field, formatInstant, notice, showProblems } from "./ui.js";

const PREVIEW_DELAY_MS = 400;
// The fields of the kind not chosen: an edit that switches kind removes them.
const OTHER_KIND = {
  once: ["rrule", "dtstart", "exdates", "working_days", "on_non_working_day"],
  repeat: ["send_at", "expires_at"],
};
// Stored fields the form does not show: an edit keeps them, so the preview includes them.
const KEPT = ["exdates", "working_days", "on_non_working_day", "expires_at",
  "misfire_grace_seconds", "on_ambiguous"];
// Where a message goes: each is its body field (exactly one is sent).
const TEAMS_KINDS = { channel: "channel", groupChat: "group chat", personal: "personal chat" };
const DESTINATIONS = ["channel", "user", "teams_conversation"];

// Builds the composer into `container`; `onSaved()` runs after each create or edit.
// Answers `{ edit(record) }` to load a stored message into the form.
export function mountMessageForm(container, onSaved) {
  const pickers = {
    channel: namePicker({ id: "m-channel", name: "channel", label: "Channel", kind: "channels",
      hint: "Type a channel's name, e.g. general (or its id, C0123ABCD)" }),
    user: namePicker({ id: "m-user", name: "user", label: "Person", kind: "users",
      hint: "Type a name (or a Slack user id, U0123ABCD): sent as a direct message from the bot" }),
  };
  const ui = build(pickers);
  const state = { record: null, key: null, keyFor: null, previewSeq: 0, timer: null };
  container.append(ui.root);
  const schedule = mountRecurrence(ui.when, { prefix: "m" });

  const input = (name) => ui.form.elements[name];
  const value = (name) => input(name).value.trim();
  const kind = () => schedule.kind();
  // Send to a channel, to a person (`user`: a direct message), or to a Microsoft Teams
  // conversation the app is installed in (`teams_conversation`).
  const to = () => (ui.form.querySelector('[name="to"]:checked')?.value ?? "channel");

  function showKind() {
    ui.toChannel.hidden = to() !== "channel";
    ui.toUser.hidden = to() !== "user";
    ui.toTeams.hidden = to() !== "teams_conversation";
  }

  // The Teams conversations the app is installed in, by name (GET /teams/conversations).
  async function fillTeams() {
    const chosen = input("teams_conversation").value;
    const answer = await api("GET", "/teams/conversations");
    const found = answer.status === 200 ? answer.data.conversations : [];
    const options = found.map((c) =>
      el("option", { value: c.id }, `${c.name} (${TEAMS_KINDS[c.conversation_type] ?? "chat"})`));
    const none = found.length ? "Choose a conversation" : "The app is installed in none yet";
    input("teams_conversation").replaceChildren(el("option", { value: "" }, none), ...options);
    chooseTeams(chosen);
  }

  // A stored conversation the list lacks (the app removed since) stays visible and chosen.
  function chooseTeams(id) {
    const select = input("teams_conversation");
    if (id && ![...select.options].some((option) => option.value === id)) {
      select.append(el("option", { value: id }, `${id} (not installed)`));
    }
    select.value = id ?? "";
  }

  async function fillCategories() {
    const chosen = input("category").value;
    const options = (await loadCategories()).map((c) => el("option", { value: c.id }, c.label));
    input("category").replaceChildren(el("option", { value: "" }, "None"), ...options);
    chooseCategory(chosen);
  }

  // A stored category the list lacks (deleted, or unreadable) stays visible and chosen.
  function chooseCategory(id) {
    const select = input("category");
    if (id && ![...select.options].some((option) => option.value === id)) {
      select.append(el("option", { value: id }, id));
    }
    select.value = id ?? "";
  }

  // The destination field: a Teams conversation chosen in the channel list goes as one.
  function destination() {
    if (to() === "teams_conversation") return { teams_conversation: value("teams_conversation") };
    const chosen = pickers[to()].value();
    if (chosen?.platform === "teams") return { teams_conversation: chosen.id };
    return { [to()]: chosen?.id ?? "" };
  }

  // The form as a create body (the shape POST /preview takes too).
  function draft() {
    const zone = value("timezone") || "UTC";
    const body = { ...destination(), text: input("text").value, timezone: zone };
    if (value("category")) body.category = value("category");
    body.allow_broadcast = input("allow_broadcast").checked;
    return Object.assign(body, schedule.fields(zone));
  }

  // An edit names only what changed; switching kind removes the other kind's fields.
  function changes(record, body) {
    const edit = {};
    for (const [name, wanted] of Object.entries(body)) {
      if (!same(name, record[name], wanted)) edit[name] = wanted;
    }
    for (const name of OTHER_KIND[kind()]) if (record[name] != null) edit[name] = null;
    const others = DESTINATIONS.filter((name) => !(name in body));
    for (const name of [...others, "category"]) {
      if (record[name] != null && !(name in body)) edit[name] = null;
    }
    return edit;
  }

  function schedulePreview() {
    clearTimeout(state.timer);
    state.timer = setTimeout(preview, PREVIEW_DELAY_MS);
  }

  async function preview() {
    const body = draft();
    const seq = ++state.previewSeq;
    if (!body.text.trim()) {
      clearPreview();
      notice(ui.previewStatus, "Type a message to see how Slack shows it.");
      return;
    }
    const kept = state.record ? KEPT.filter((name) => state.record[name] != null) : [];
    for (const name of kept) {
      if (!OTHER_KIND[kind()].includes(name)) body[name] = state.record[name];
    }
    const answer = await api("POST", "/preview?count=5", { body });
    if (seq !== state.previewSeq) return; // a newer preview is on its way
    if (answer.status !== 200) {
      // An invalid draft shows no preview at all: an old one would describe another draft.
      clearPreview();
      const details = answer.data?.details ?? [];
      const why = details.map((d) => `${d.field}: ${d.message}`).join("; ");
      notice(ui.previewStatus, `No preview yet: ${why || answer.data?.message || answer.status}`);
      return;
    }
    notice(ui.previewStatus, "");
    schedule.showWords(answer.data.schedule_text);
    ui.rendered.replaceChildren(renderMrkdwn(answer.data.text, answer.data.names));
    const zone = body.timezone;
    ui.occurrences.replaceChildren(
      ...answer.data.occurrences.map((when) =>
        el("li", {}, formatInstant(when.utc, zone), el("br"), `yours: ${formatInstant(when.utc)}`),
      ),
    );
  }

  function clearPreview() {
    ui.rendered.replaceChildren();
    ui.occurrences.replaceChildren();
    schedule.showWords(null);
  }

  async function save(event) {
    event.preventDefault();
    clearProblems(ui.form);
    notice(ui.status, "");
    const body = draft();
    const record = state.record;
    let answer;
    ui.submit.disabled = true;
    try {
      if (record) {
        const edit = changes(record, body);
        if (!Object.keys(edit).length) return notice(ui.status, "Nothing changed.");
        const path = `/messages/${encodeURIComponent(record.id)}`;
        answer = await api("PUT", path, { body: edit, ifMatch: record.version });
      } else {
        answer = await api("POST", "/messages", { body, idempotencyKey: keyFor(body) });
      }
    } finally {
      ui.submit.disabled = false;
    }
    if (answer.status === 200 || answer.status === 201) {
      const what = record ? "Saved" : "Scheduled";
      reset();
      notice(ui.status, `${what}: message ${answer.data.id} (${answer.data.status}).`);
      onSaved(answer.data);
    } else if (answer.status === 412) {
      const reload = el("button", { type: "button", onclick: () => reloadRecord() }, "Reload");
      notice(ui.status, "Someone changed this message since you opened it; your edit was not " +
        "saved. Reload to see their version.", { alert: true, actions: [reload] });
      reload.focus();
    } else if (answer.status === 409) {
      notice(ui.status, conflictText(answer.data), { alert: true });
    } else if (answer.status !== 401) {
      showProblems(ui.form, answer);
    }
  }

  // The same body retried (a lost answer, a double click) reuses its key: one record only.
  function keyFor(body) {
    const text = JSON.stringify(body);
    if (state.keyFor !== text) {
      // getRandomValues, unlike randomUUID, works outside secure contexts too.
      const bytes = crypto.getRandomValues(new Uint8Array(16));
      state.key = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
      state.keyFor = text;
    }
    return state.key;
  }

  async function reloadRecord() {
    const answer = await api("GET", `/messages/${encodeURIComponent(state.record.id)}`);
    if (answer.status !== 200) {
      return notice(ui.status, `Reload failed: ${answer.data?.message}`, { alert: true });
    }
    edit(answer.data);
    notice(ui.status, `Reloaded version ${answer.data.version}; make your change again.`);
  }

  function edit(record) {
    state.record = record;
    clearProblems(ui.form);
    notice(ui.status, "");
    ui.heading.textContent = `Edit message ${record.id}`;
    ui.submit.textContent = "Save changes";
    ui.stop.hidden = false;
    const zone = record.timezone ?? "UTC";
    pickers.channel.set(record.channel, record.names);
    pickers.user.set(record.user, record.names);
    chooseTeams(record.teams_conversation);
    const recipient = DESTINATIONS.find((name) => record[name] != null) ?? "channel";
    ui.form.querySelector(`[name="to"][value="${recipient}"]`).checked = true;
    chooseCategory(record.category);
    input("text").value = record.text ?? "";
    input("timezone").value = zone;
    input("allow_broadcast").checked = Boolean(record.allow_broadcast);
    schedule.load(record, zone);
    showKind();
    preview();
    ui.heading.focus();
  }

  function reset() {
    state.record = null;
    ui.form.reset();
    pickers.channel.clear();
    pickers.user.clear();
    chooseCategory("");
    chooseTeams("");
    input("timezone").value = viewerZone();
    schedule.load({}, viewerZone());
    ui.heading.textContent = "Schedule a message";
    ui.submit.textContent = "Schedule";
    ui.stop.hidden = true;
    showKind();
    preview();
  }

  ui.form.addEventListener("submit", save);
  ui.form.addEventListener("input", schedulePreview);
  ui.form.addEventListener("change", () => {
    showKind();
    schedulePreview();
  });
  ui.stop.addEventListener("click", () => {
    reset();
    notice(ui.status, "Edit abandoned; nothing was saved.");
  });
  reset();
  fillCategories();
  fillTeams();
  return { edit };
}

function same(name, stored, wanted) {
  if (name === "send_at") return stored && new Date(stored).getTime() === new Date(wanted).getTime();
  if (name === "allow_broadcast") return Boolean(stored) === wanted;
  if (name === "timezone") return (stored ?? "UTC") === wanted;
  return stored === wanted;
}

function conflictText(data) {
  const status = data?.details?.find((detail) => detail.field === "status")?.message;
  if (status === "sending") {
    return "This message is being sent right now, so it cannot be changed; try again once " +
      "the send is settled.";
  }
  return `Not saved: ${data?.message ?? "the message cannot be changed now"}.`;
}

// The form's elements; every control has a <label>, hints are tied by aria-describedby.
function build(pickers) {
  const radio = (value, label, checked, name) =>
    el("span", { class: "choice" },
      el("input", { type: "radio", id: `m-${name}-${value}`, name, value, checked }),
      el("label", { for: `m-${name}-${value}` }, label));
  const when = el("fieldset", { "data-field": "schedule" }, el("legend", {}, "When"));
  const heading = el("h2", { id: "m-form-heading", tabindex: "-1" }, "Schedule a message");
  const toChannel = pickers.channel.root;
  const toUser = pickers.user.root;
  const toTeams = field("Teams conversation",
    el("select", { id: "m-teams-conversation", name: "teams_conversation" },
      el("option", { value: "" }, "Loading…")),
    "A Microsoft Teams channel or chat the app is installed in");
  const submit = el("button", { type: "submit", class: "primary" }, "Schedule");
  const stop = el("button", { type: "button", hidden: true }, "Stop editing");
  const status = el("div", { class: "notice", hidden: true });
  const form = el("form", { novalidate: true, "aria-labelledby": "m-form-heading" },
    el("fieldset", {},
      el("legend", {}, "Send to"),
      el("div", { role: "radiogroup", "aria-label": "Send to" },
        radio("channel", "A channel", true, "to"), radio("user", "A person", false, "to"),
        radio("teams_conversation", "Microsoft Teams", false, "to")),
      toChannel, toUser, toTeams),
    field("Message", el("textarea", { id: "m-text", name: "text", rows: "6" }),
      "Markdown: **bold**, _italics_, ~~strike~~, [links](https://…), `code`, lists, <@U123>"),
    field("Category", el("select", { id: "m-category", name: "category" },
      el("option", { value: "" }, "None")),
      "What kind of message this is; people can opt out of some categories (People section)"),
    timezoneField("m-timezone").root,
    when,
    el("div", { class: "field choice" },
      el("input", { id: "m-broadcast", name: "allow_broadcast", type: "checkbox" }),
      el("label", { for: "m-broadcast" }, "Allow @here, @channel and @everyone to notify")),
    el("div", { class: "form-problems", hidden: true }),
    el("div", { class: "actions" }, submit, stop),
  );
  const previewStatus = el("p", { class: "hint", role: "status" });
  // A labelled group: a plain div may not carry a name (axe aria-prohibited-attr).
  const rendered = el("div", { role: "group", "aria-label": "How Slack shows it" });
  const occurrences = el("ol", { class: "occurrences" });
  const aside = el("aside", { class: "preview", "aria-labelledby": "m-preview-heading" },
    el("h3", { id: "m-preview-heading" }, "Preview"),
    previewStatus, rendered,
    el("h4", {}, "Next occurrences"), occurrences);
  const root = el("div", { class: "composer" },
    el("div", {}, heading, status, form), aside);
  return { root, form, heading, submit, stop, status, when, toChannel, toUser, toTeams,
    previewStatus, rendered, occurrences };
}
