// The Rotations section: list, create and edit rotations (members in turn order, skips by
// date, away periods, send time, weekdays, working-days country), who is up and swapping
// turns, the next turns as the API's preview computes them, the history of posted and
// skipped days, and the answers to its buttons. A rotation's own URL is #/rotations/{id}
// (web/app.js calls `show(id)` of the object `mountRotations` answers).
// All user text reaches the page as text nodes (ui.js's `el`), never as HTML.

import { api } from "./api.js";
import { namePicker } from "./pickers.js";
import { DAYS, mountRecurrence } from "./recurrence.js";
import { timezoneField } from "./timezones.js";
import { showResponses } from "./responses.js";
import { awayBody, awayEditor } from "./rotation_away.js";
import { nameOf } from "./names.js";
import { upLine, upPanel } from "./rotation_up.js";
import { clearProblems, el, field, formatInstant, notice, showProblems } from "./ui.js";

const PAGE = 20;
const TURNS = 5;
const VIEWER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const STALE =
  "Someone changed this rotation since you opened it; reload to see their version (your changes here are not saved).";
const BUSY = "A turn of this rotation is being posted right now; try again in a moment.";
const REASONS = {
  missed: "nothing ran that day",
  everyone_skipped: "every member was out",
  day_ended: "its day ended before it could be posted",
};

let serial = 0;
function uid(stem) {
  serial += 1;
  return `rot-${stem}-${serial}`;
}

// ui.js's `el`, then properties a form control needs set as properties (value, checked).
function make(tag, attrs = {}, children = [], props = {}) {
  return Object.assign(el(tag, attrs, children), props);
}

function button(text, onclick, attrs = {}) {
  return el("button", { type: "button", onclick, ...attrs }, text);
}

// A labelled control (ui.js's `field`), given an id when it has none.
function labelled(label, control, hint) {
  control.id ||= uid("f");
  return field(label, control, hint);
}

function checkbox(label, checked, attrs = {}) {
  const box = make("input", { type: "checkbox", id: uid("c"), ...attrs }, [], { checked });
  return { box, node: el("span", { class: "choice" }, box, el("label", { for: box.id }, label)) };
}

function loadStyles() {
  if (document.querySelector("link[data-rotations]")) return;
  const href = new URL("static/rotations.css", document.baseURI).href;
  document.head.append(el("link", { rel: "stylesheet", href, "data-rotations": true }));
}

function messageOf(answer, fallback) {
  return typeof answer.data?.message === "string" ? answer.data.message : fallback;
}

// --- the section ---------------------------------------------------------------------------

// Answers {show(id)}: open that rotation's view, or close it (`null`).
export function mountRotations(container) {
  loadStyles();
  const status = el("div", { class: "notice", hidden: true });
  const list = el("div", { class: "rot-list" });
  const detail = el("div", { class: "rot-detail" });
  container.replaceChildren(
    el("h2", {}, "Rotations"),
    status,
    el("div", { class: "toolbar" }, button("New rotation", () => create(), { class: "primary" })),
    el("h3", {}, "All rotations"),
    list,
    detail,
  );

  async function loadList() {
    const rows = el("ul", { class: "rot-rows" });
    list.replaceChildren(rows);
    await page(rows, null);
  }

  async function page(rows, cursor) {
    const query = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const answer = await api("GET", `/rotations?limit=${PAGE}${query}`);
    if (answer.status !== 200) {
      notice(status, messageOf(answer, `Rotations could not be listed (${answer.status}).`), { alert: true });
      return;
    }
    const { rotations, next_cursor: next } = answer.data;
    rows.append(...rotations.map(row));
    if (!rotations.length && !cursor) rows.append(el("li", {}, "No rotations yet."));
    if (next) {
      const more = button("More rotations", async () => {
        more.remove();
        await page(rows, next);
      });
      list.append(more);
    }
  }

  function row(rotation) {
    const members = Array.isArray(rotation.members) ? rotation.members.length : 0;
    const where = rotation.channel ?? rotation.teams_conversation ?? "";
    return el(
      "li",
      { class: "rot-row", "data-rotation": rotation.id },
      el("a", { href: hashOf(rotation.id), class: "rot-open" }, rotation.name),
      el("span", { class: `status status-${rotation.status}` }, rotation.status),
      el("span", { class: "hint" }, `${nameOf(where, rotation.names)} · ${members} members · ${upLine(rotation)}`),
    );
  }

  // The new-rotation form belongs to the section's own URL.
  function create() {
    if (location.hash !== "#/rotations") history.pushState(null, "", "#/rotations");
    editor(detail, null, { saved });
    detail.querySelector("input").focus();
  }

  let opening = 0;
  async function open(rotationId) {
    const ticket = ++opening;
    const answer = await api("GET", `/rotations/${encodeURIComponent(rotationId)}`);
    if (ticket !== opening) return; // another view was asked for meanwhile
    if (answer.status !== 200) {
      notice(status, messageOf(answer, `The rotation could not be opened (${answer.status}).`), { alert: true });
      return;
    }
    editor(detail, answer.data, { saved, reload: () => open(rotationId), changed });
    detail.querySelector("form.rot-form h3").focus();
  }

  async function saved(rotation, created) {
    await changed(rotation, `Rotation “${rotation.name}” ${created ? "created" : "saved"}.`);
  }

  async function changed(rotation, words) {
    notice(status, words);
    await loadList();
    if (location.hash === hashOf(rotation.id)) await open(rotation.id);
    else location.hash = hashOf(rotation.id); // app.js routes back here: show(id)
  }

  loadList();
  return {
    show(rotationId) {
      if (rotationId) open(rotationId);
      else {
        opening += 1;
        detail.replaceChildren();
      }
    },
  };
}

function hashOf(rotationId) {
  return `#/rotations/${encodeURIComponent(rotationId)}`;
}

// --- the editor ----------------------------------------------------------------------------

function editor(host, stored, { saved, reload, changed }) {
  const state = fromStored(stored);
  const names = stored?.names ?? {};
  const away = awayEditor(state, names);
  const problems = el("div", { class: "form-problems", hidden: true });
  const text = (name, value, attrs = {}) =>
    make("input", { type: "text", name, autocomplete: "off", ...attrs }, [], { value });

  const name = text("name", state.name, { required: true, maxlength: 200 });
  const channel = namePicker({
    id: uid("channel"), name: "channel", label: "Channel", kind: "channels",
    hint: "Type part of its name and pick it (or paste its id).",
  });
  channel.set(state.channel, names);
  const message = make("textarea", { name: "text", rows: 3, required: true }, [], { value: state.text });
  const zone = timezoneField(uid("timezone"));
  const timezone = Object.assign(zone.input, { value: state.timezone });
  const country = text("working_days.country", state.country, { maxlength: 2 });
  const subdivision = text("working_days.subdivision", state.subdivision);
  const statusSelect = make(
    "select",
    { name: "status" },
    [el("option", { value: "active" }, "Active"), el("option", { value: "paused" }, "Paused")],
    { value: state.status },
  );
  // The message form's recurrence controls, limited to what a rotation can be: its turn days
  // and send time. A 422 on send_time or weekdays goes beside the matching control.
  const when = el("fieldset", { class: "rot-when" }, el("legend", {}, "Turn days and send time"));
  const recurrence = mountRecurrence(when, { prefix: uid("r"), modes: ["daily", "weekdays", "weekly"], date: false });
  recurrence.setWeekly(state.weekdays.map((index) => DAYS[index]), state.send_time);
  recurrence.showWords(stored?.schedule_text ?? null);
  when.addEventListener("change", () => recurrence.showWords(null)); // the words were the saved schedule's
  when.querySelector('input[type="time"]').dataset.field = "send_time";
  when.querySelector("fieldset").dataset.field = "weekdays";
  const members = el("fieldset", { "data-field": "members", class: "rot-members" });
  const moved = el("p", { class: "hint", "aria-live": "polite" });
  const skips = el("fieldset", { "data-field": "skips", class: "rot-skips" });
  const save = el("button", { type: "submit", class: "primary" }, stored ? "Save changes" : "Create rotation");
  const heading = el("h3", { tabindex: -1 }, stored ? `Edit “${stored.name}”` : "New rotation");

  const form = el(
    "form",
    { class: "rot-form", novalidate: true, "aria-label": stored ? `Edit ${stored.name}` : "New rotation" },
    heading,
    problems,
    labelled("Name", name),
    channel.root,
    labelled("Message", message, "Markdown; {member} becomes a mention of whoever takes the turn."),
    zone.root,
    when,
    members,
    skips,
    away.node,
    el(
      "fieldset",
      { "data-field": "working_days" },
      el("legend", {}, "Working days (optional)"),
      labelled("Country", country, "An ISO code such as DE: no turn on its public holidays. Empty: every weekday above."),
      labelled("Subdivision", subdivision, "Optional, such as BY for Bavaria."),
    ),
    labelled("Status", statusSelect),
    el("div", { class: "actions" }, save),
  );
  form.addEventListener("submit", submit);
  const side = el("div", { class: "rot-side" });
  // Who is up comes first: on a phone it would otherwise sit below the whole form.
  host.replaceChildren(...(stored ? [upPanel(stored, { changed, reload })] : []), el("div", { class: "composer" }, form, side));
  if (stored) side.append(preview(stored), history(stored), ...answers(stored));
  renderMembers();
  renderSkips();

  // Members in turn order; "next up" marks who takes the next turn and follows its member
  // through moves.
  function renderMembers(focus) {
    const rows = el("ol", { class: "rot-member-list" });
    state.members.forEach((member, index) => {
      const label = `Member ${index + 1}`;
      const input = text(`members.${index}`, member.id);
      input.addEventListener("input", () => {
        member.id = input.value.trim();
        renderSkips();
      });
      const next = make("input", { type: "radio", name: "next-up", id: uid("n") }, [], {
        checked: state.next === member,
      });
      next.addEventListener("change", () => {
        state.next = member;
        state.nextChosen = true;
      });
      const item = el(
        "li",
        { class: "rot-member", draggable: "true", "data-key": member.key },
        labelled(label, input),
        names[member.id] ? el("span", { class: "rot-member-name" }, names[member.id]) : null,
        el("span", { class: "choice" }, next, el("label", { for: next.id }, `${label} is next up`)),
        el(
          "span",
          { class: "rot-moves" },
          moveButton("Up", `Move ${label} up`, index, -1),
          moveButton("Down", `Move ${label} down`, index, 1),
          button("Remove", () => remove(index), { "aria-label": `Remove ${label}` }),
        ),
      );
      dragAndDrop(item, index);
      rows.append(item);
    });
    const added = namePicker({ id: uid("new-member"), name: "new-member", label: "New member", kind: "users" });
    const add = button("Add member", () => {
      const id = added.value()?.id;
      if (!id) return;
      if (added.input.value !== id) names[id] = added.input.value; // picked by name: show it
      state.members.push(newMember(id));
      state.next ||= state.members[0];
      renderMembers();
      renderSkips();
      members.querySelector('input[name="new-member"]').focus();
    });
    added.input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.defaultPrevented) return; // Enter on a suggestion picks it
      event.preventDefault();
      add.click();
    });
    members.replaceChildren(
      el("legend", {}, "Members, in turn order"),
      el("p", { class: "hint" }, "Add people by name (or Slack user id). Reorder with Up and Down (or drag)."),
      moved,
      rows,
      added.root,
      add,
    );
    if (focus) {
      // The keyboard stays on the moved member: the same button, or the other way at an end.
      const item = members.querySelector(`li[data-key="${focus.key}"]`);
      const enabled = [...item.querySelectorAll("button[data-move]")].filter((b) => !b.disabled);
      (enabled.find((b) => b.dataset.move === focus.move) ?? enabled[0] ?? item.querySelector("input")).focus();
    }
  }

  function moveButton(label, aria, index, step) {
    const to = index + step;
    const move = step < 0 ? "up" : "down";
    return el("button", {
      type: "button",
      "aria-label": aria,
      "data-move": move,
      disabled: to < 0 || to >= state.members.length,
      onclick: () => moveMember(index, to, move),
    }, label);
  }

  function moveMember(from, to, move) {
    if (to < 0 || to >= state.members.length || from === to) return;
    const [member] = state.members.splice(from, 1);
    state.members.splice(to, 0, member);
    renderMembers({ key: member.key, move });
    moved.textContent = `${member.id || "The member"} is now number ${to + 1} of ${state.members.length}.`;
  }

  function remove(index) {
    const [gone] = state.members.splice(index, 1);
    // Like the API: when whoever was next leaves, the one after them is next.
    if (state.next === gone) state.next = state.members[index] ?? state.members[0] ?? null;
    renderMembers();
    renderSkips();
    members.querySelector('input[name="new-member"]').focus();
  }

  function dragAndDrop(item, index) {
    item.addEventListener("dragstart", (event) => {
      event.dataTransfer.setData("text/plain", String(index));
      event.dataTransfer.effectAllowed = "move";
    });
    item.addEventListener("dragover", (event) => event.preventDefault());
    item.addEventListener("drop", (event) => {
      event.preventDefault();
      const from = Number(event.dataTransfer.getData("text/plain"));
      if (Number.isInteger(from)) moveMember(from, index, from < index ? "down" : "up");
    });
  }

  // Skips: a date and the members out that day (any of the current members).
  function renderSkips() {
    const rows = el("ul", { class: "rot-skip-list" });
    state.skips.forEach((skip, position) => {
      const label = `Skip date ${position + 1}`;
      // A 422 names `skips.<date>`: its message goes under this date's field.
      const date = make("input", { type: "date", name: `skip-date-${position}`, "data-field": `skips.${skip.date}` }, [], {
        value: skip.date,
      });
      const item = el("li", { class: "rot-skip" });
      date.addEventListener("change", () => {
        skip.date = date.value;
        date.setAttribute("data-field", `skips.${skip.date}`);
      });
      const out = el("fieldset", {}, el("legend", {}, `Out on ${label.toLowerCase()}`));
      for (const member of state.members.filter((m) => m.id)) {
        const { box, node } = checkbox(nameOf(member.id, names), skip.out.has(member.id));
        box.addEventListener("change", () => (box.checked ? skip.out.add(member.id) : skip.out.delete(member.id)));
        out.append(node);
      }
      item.append(
        labelled(label, date),
        out,
        button("Remove skip date", () => {
          state.skips.splice(position, 1);
          renderSkips();
          skips.querySelector("button.rot-add-skip").focus();
        }, { "aria-label": `Remove ${label.toLowerCase()}` }),
      );
      rows.append(item);
    });
    const add = button("Add a skip date", () => {
      state.skips.push({ date: "", out: new Set() });
      renderSkips();
      skips.querySelector(`input[name="skip-date-${state.skips.length - 1}"]`).focus();
    }, { class: "rot-add-skip" });
    skips.replaceChildren(el("legend", {}, "Skips: members out on a date"), rows, add);
    away.render(); // its member list follows the members'
  }

  function body() {
    const ids = state.members.map((m) => m.id).filter(Boolean);
    const out = {};
    for (const skip of state.skips) {
      const away = ids.filter((id) => skip.out.has(id));
      if (skip.date && away.length) out[skip.date] = away;
    }
    const place = country.value.trim().toUpperCase();
    const draft = {
      name: name.value,
      channel: channel.value()?.id ?? "",
      members: ids,
      timezone: timezone.value.trim(),
      send_time: recurrence.time(),
      weekdays: recurrence.weekdays().map((day) => DAYS.indexOf(day)),
      text: message.value,
      status: statusSelect.value,
      skips: Object.keys(out).length ? out : null,
      working_days: place ? { country: place, subdivision: subdivision.value.trim() || null } : null,
      on_ambiguous: state.on_ambiguous,
    };
    // `away` is sent when there is some, or to clear the stored ones.
    if (state.away.length || stored?.away?.length) draft.away = awayBody(state);
    // Unless someone chose, an edit leaves who is next to the API (whoever was next stays).
    if (!stored || state.nextChosen) draft.cursor = Math.max(state.members.filter((m) => m.id).indexOf(state.next), 0);
    if (!stored) for (const key of ["skips", "working_days", "on_ambiguous"]) if (draft[key] === null) delete draft[key];
    return draft;
  }

  async function submit(event) {
    event.preventDefault();
    clearProblems(form);
    save.disabled = true;
    const answer = stored
      ? await api("PUT", `/rotations/${encodeURIComponent(stored.id)}`, { body: body(), ifMatch: stored.version })
      : await api("POST", "/rotations", { body: body(), idempotencyKey: state.key });
    save.disabled = false;
    if (answer.status === 200 || answer.status === 201) {
      await saved(answer.data, answer.status === 201);
    } else if (answer.status === 412) {
      notice(problems, STALE, { alert: true, actions: [button("Reload", reload, { class: "primary" })] });
      problems.querySelector("button").focus();
    } else if (answer.status === 422) {
      showProblems(form, answer);
    } else {
      const text = answer.status === 409 ? BUSY : messageOf(answer, `The API answered ${answer.status}.`);
      notice(problems, text, { alert: true });
    }
  }
}

// One key per create form: a retried create answers the rotation it made. randomUUID needs a
// secure context; getRandomValues works on plain http too (a LAN address under `make run`).
function idempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

let keys = 0;
function newMember(id) {
  keys += 1;
  return { id, key: `m${keys}` };
}

function fromStored(stored) {
  const s = stored ?? {};
  const members = (Array.isArray(s.members) ? s.members : []).map(newMember);
  const cursor = Number.isInteger(s.cursor) ? s.cursor : 0;
  return {
    name: s.name ?? "",
    channel: s.channel ?? "",
    timezone: s.timezone ?? VIEWER_ZONE,
    send_time: s.send_time ?? "09:30",
    text: s.text ?? "{member} hosts today's stand-up",
    status: s.status ?? "active",
    weekdays: Array.isArray(s.weekdays) ? s.weekdays : [0, 1, 2, 3, 4],
    country: s.working_days?.country ?? "",
    subdivision: s.working_days?.subdivision ?? "",
    on_ambiguous: s.on_ambiguous ?? null,
    members,
    next: members[cursor] ?? members[0] ?? null,
    nextChosen: false,
    skips: Object.entries(s.skips ?? {}).map(([date, out]) => ({ date, out: new Set(out) })),
    away: (Array.isArray(s.away) ? s.away : []).map(({ member, from, to }) => ({ member, from, to })),
    key: idempotencyKey(),
  };
}

// --- preview and history -------------------------------------------------------------------

function preview(stored) {
  const body = el("div", {}, "Loading the next turns…");
  const section = el(
    "section",
    { class: "preview rot-preview", "aria-label": "Next turns" },
    el("h3", {}, "Next turns"),
    el("p", { class: "hint" }, "Of the saved rotation: save to preview your changes."),
    body,
  );
  (async () => {
    const path = `/rotations/${encodeURIComponent(stored.id)}/preview?count=${TURNS}`;
    const answer = await api("POST", path, { body: {} });
    if (answer.status !== 200) {
      body.replaceChildren(el("p", { class: "reason" }, messageOf(answer, `No preview (${answer.status}).`)));
      return;
    }
    const turns = el("ol", { class: "rot-turns" });
    for (const turn of answer.data.turns) {
      turns.append(
        el(
          "li",
          { class: "rot-turn" },
          el("strong", { class: "rot-turn-member" }, turn.member ? nameOf(turn.member, answer.data.names) : "everyone is out"),
          el("span", { class: "hint" }, ` ${formatInstant(turn.utc, stored.timezone)}`),
          stored.timezone === VIEWER_ZONE ? null : el("span", { class: "hint" }, ` (yours: ${formatInstant(turn.utc, VIEWER_ZONE)})`),
        ),
      );
    }
    const post = answer.data.text === null
      ? []
      : [el("p", { class: "hint" }, "The next post, as Slack receives it:"), el("pre", { class: "rot-post" }, answer.data.text), ...postButtons(answer.data.blocks)];
    body.replaceChildren(turns, ...post);
  })();
  return section;
}

// The post's buttons (its Block Kit actions block), shown as Slack shows them; labels as text.
function postButtons(blocks) {
  const buttons = blocks.filter((block) => block.type === "actions").flatMap((block) => block.elements);
  if (!buttons.length) return [];
  const shown = buttons.map((b) => el("button", { type: "button", class: "rot-post-button", disabled: true }, b.text.text));
  return [el("div", { class: "rot-post-buttons", "aria-label": "The post's buttons" }, ...shown)];
}

// The answers to the rotation's buttons (responses.js), when it has buttons.
function answers(stored) {
  if (!stored.actions?.length) return [];
  const section = el("section", { class: "rot-answers", "aria-label": "Answers" });
  showResponses(section, stored, "rotations");
  return [section];
}

function history(stored) {
  const rows = el("tbody", {});
  const table = el(
    "table",
    { class: "history" },
    el("caption", {}, "History: posted and skipped days"),
    el("thead", {}, el("tr", {}, ["Date", "Member", "Status", "Why"].map((head) => el("th", { scope: "col" }, head)))),
    rows,
  );
  const section = el("section", { class: "rot-history", "aria-label": "History" }, el("div", { class: "scroll" }, table));

  async function more(cursor) {
    const query = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const path = `/rotations/${encodeURIComponent(stored.id)}/deliveries?limit=${PAGE}${query}`;
    const answer = await api("GET", path);
    if (answer.status !== 200) {
      section.append(el("p", { class: "reason" }, messageOf(answer, `No history (${answer.status}).`)));
      return;
    }
    for (const day of answer.data.deliveries) {
      const why = day.reason ? (REASONS[day.reason] ?? day.reason) : "";
      rows.append(
        el(
          "tr",
          { class: "rot-day" },
          el("td", { "data-label": "Date" }, day.occurrence_date ?? ""),
          el("td", { "data-label": "Member" }, day.member ?? "—"),
          el("td", { "data-label": "Status" }, el("span", { class: `status status-${day.status}` }, day.status)),
          el("td", { "data-label": "Why" }, why),
        ),
      );
    }
    if (!answer.data.deliveries.length && !cursor) {
      rows.append(el("tr", {}, el("td", { colspan: 4 }, "No days yet.")));
    }
    if (answer.data.next_cursor) {
      const older = button("Older days", async () => {
        older.remove();
        await more(answer.data.next_cursor);
      });
      section.append(older);
    }
  }
  more(null);
  return section;
}
