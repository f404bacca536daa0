// The Agenda (#/agenda): every occurrence due in a range, messages and rotation turns alike
// (GET /agenda), grouped by day in the viewer's timezone, each with the viewer's time and the
// schedule's own time and zone beside it, its schedule in words and names instead of ids.
// Default range: the API's (the next 7 days); a chosen one is whole days in the viewer's
// zone. The search box is the API's `q` (text, channel, person), debounced. The range and the
// search are kept in the URL (#/agenda?from=&to=&q=), so a reload shows the same agenda.
import { api } from "./api.js";
import { nameOf, withNames } from "./names.js";
import { viewerZone, zonedIso } from "./time.js";
import { clearProblems, el, field, notice, showProblems } from "./ui.js";

const DEBOUNCE_MS = 300;
const DEFAULT_DAYS = 7;

export function mountAgenda(container) {
  loadStyles();
  const form = filterForm();
  const summary = el("p", { role: "status", class: "hint" });
  const days = el("div", { class: "agenda-days" });
  container.append(
    el("h2", {}, "Agenda"),
    el("p", { class: "hint" }, `What goes out when, in your time (${viewerZone()}), with each schedule's own time beside it.`),
    form, summary, days);
  let ticket = 0;
  let timer = null;

  async function load() {
    clearTimeout(timer);
    clearProblems(form);
    const query = range(form);
    if (query === null) return;
    keepInUrl(form);
    const mine = ++ticket;
    const answer = await api("GET", query ? `/agenda?${query}` : "/agenda");
    if (mine !== ticket) return; // a newer search answered (or will)
    if (answer.status === 422) {
      showProblems(form, answer);
    } else if (answer.status !== 200) {
      if (answer.status !== 401) notice(summary, `Could not read the agenda: ${answer.data?.message ?? answer.status}`);
    } else {
      show(answer.data);
    }
  }

  function show(data) {
    const items = data.items ?? [];
    const chosen = form.elements.from.value || form.elements.to.value;
    const span = chosen ? "in this range" : `in the next ${DEFAULT_DAYS} days`;
    const q = form.elements.q.value.trim();
    summary.textContent = `${items.length} due ${span}${q ? ` matching “${q}”` : ""}.`;
    if (typeof data.note === "string") summary.textContent += ` ${data.note}`;
    days.replaceChildren(...byDay(items).map(([title, group]) => el("section", { class: "agenda-day" },
      el("h3", {}, title), el("ol", { class: "agenda-items" }, group.map(item)))));
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  form.elements.from.addEventListener("change", load);
  form.elements.to.addEventListener("change", load);
  form.elements.q.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(load, DEBOUNCE_MS);
  });
  const view = {
    // Called by app.js on each visit: a URL with another range or search shows that one.
    show() {
      if (fromUrl(form)) load();
    },
  };
  fromUrl(form);
  load();
  return view;
}

// The form's range and search as the URL gives them (none given: the form as it is); answers
// whether anything changed.
function fromUrl(form) {
  const query = location.hash.split("?")[1];
  if (query === undefined) return false;
  const given = new URLSearchParams(query);
  let changed = false;
  for (const name of ["from", "to", "q"]) {
    const value = given.get(name) ?? "";
    if (form.elements[name].value !== value) {
      form.elements[name].value = value;
      changed = true;
    }
  }
  return changed;
}

function filterForm() {
  const input = (id, name, type, attrs = {}) => el("input", { id, name, type, ...attrs });
  return el("form", { class: "filters", role: "search", "aria-label": "Agenda range and search", novalidate: true },
    field("From", input("a-from", "from", "date"), "A day in your timezone; empty: today."),
    field("To (inclusive)", input("a-to", "to", "date"), `Empty: ${DEFAULT_DAYS} days from From.`),
    field("Search", input("a-q", "q", "search", { autocomplete: "off" }), "Text, channel or person, by name or id."),
    el("div", { class: "form-problems", hidden: true }),
    el("button", { type: "submit" }, "Show"));
}

// The query for the chosen range (whole days in the viewer's zone) and search, or null after
// showing why the range is wrong. No dates at all: the API's default range.
function range(form) {
  const from = form.elements.from.value;
  const to = form.elements.to.value;
  const query = new URLSearchParams();
  const q = form.elements.q.value.trim();
  if (from || to) {
    const first = from || today();
    const last = to || addDays(first, DEFAULT_DAYS - 1);
    if (last < first) {
      showProblems(form, { data: { details: [{ field: "to", message: "To is before From." }] } });
      return null;
    }
    query.set("from", zonedIso(`${first}T00:00`, viewerZone()));
    query.set("to", zonedIso(`${addDays(last, 1)}T00:00`, viewerZone()));
  }
  if (q) query.set("q", q);
  return query.toString();
}

function keepInUrl(form) {
  const kept = new URLSearchParams();
  for (const name of ["from", "to", "q"]) {
    const value = form.elements[name].value.trim();
    if (value) kept.set(name, value);
  }
  const hash = kept.toString() ? `#/agenda?${kept}` : "#/agenda";
  if (location.hash.startsWith("#/agenda") && location.hash !== hash) history.replaceState(null, "", hash);
}

function today() {
  return dayOf(new Date().toISOString());
}

function addDays(date, count) {
  const [y, m, d] = date.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d + count)).toISOString().slice(0, 10);
}

// "YYYY-MM-DD" of an instant in the viewer's zone.
function dayOf(at) {
  return new Intl.DateTimeFormat("en-CA", {
    timeZone: viewerZone(), year: "numeric", month: "2-digit", day: "2-digit",
  }).format(new Date(at));
}

// [[day title, items]] in the API's order (by `at`), a day per viewer's local date.
function byDay(items) {
  const groups = new Map();
  const title = new Intl.DateTimeFormat(undefined, { timeZone: viewerZone(), dateStyle: "full" });
  for (const entry of items) {
    const key = dayOf(entry.at);
    if (!groups.has(key)) groups.set(key, [title.format(new Date(entry.at)), []]);
    groups.get(key)[1].push(entry);
  }
  return [...groups.values()];
}

function item(entry) {
  const names = entry.names ?? {};
  const where = nameOf(entry.channel ?? entry.user ?? entry.teams_conversation, names);
  const rotation = entry.kind === "rotation";
  const href = `#/${rotation ? "rotations" : "messages"}/${encodeURIComponent(entry.id)}`;
  const label = rotation
    ? `Turn of ${entry.member ? nameOf(entry.member, names) : "nobody (everyone is out)"} in ${where}`
    : `Message to ${where}`;
  const mine = new Intl.DateTimeFormat(undefined, { timeZone: viewerZone(), timeStyle: "short" });
  return el("li", { class: `agenda-item agenda-${entry.kind}`, "data-id": entry.id },
    el("p", { class: "agenda-when" },
      el("time", { datetime: entry.at }, mine.format(new Date(entry.at))),
      el("span", { class: "hint" }, ` · ${theirs(entry)}`)),
    el("div", { class: "agenda-what" },
      el("a", { href }, label),
      el("p", { class: "agenda-text" }, clip(withNames(entry.text ?? "", names))),
      entry.schedule_text ? el("p", { class: "hint" }, entry.schedule_text) : null));
}

// The schedule's own wall clock and zone ("Tue 09:30 Europe/Berlin"), from the API's `local`.
function theirs(entry) {
  const [date, time = ""] = String(entry.local ?? "").split("T");
  const [y, m, d] = date.split("-").map(Number);
  const [h, mi] = time.split(":").map(Number);
  if (![y, m, d, h, mi].every(Number.isFinite)) return entry.timezone ?? "";
  const wall = new Date(Date.UTC(y, m - 1, d, h, mi));
  const sameDay = date === dayOf(entry.at);
  const shown = new Intl.DateTimeFormat(undefined, {
    timeZone: "UTC", timeStyle: "short", ...(sameDay ? {} : { dateStyle: "medium" }),
  }).format(wall);
  return `${shown} ${entry.timezone}`;
}

function clip(text, limit = 200) {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

function loadStyles() {
  if (document.querySelector("link[data-agenda]")) return;
  const href = new URL("static/agenda.css", document.baseURI).href;
  document.head.append(el("link", { rel: "stylesheet", href, "data-agenda": true }));
}
