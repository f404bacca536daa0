// Who is up in a rotation (the API's `up`: today's turn and the next one), in the rotation's
// timezone and the viewer's, and swapping two members' next turns
// (POST /rotations/{id}/swap with If-Match). Members are shown by name (the answer's `names`).
import { api } from "./api.js";
import { nameOf } from "./names.js";
import { viewerZone } from "./time.js";
import { clearProblems, el, field, formatInstant, notice, showProblems } from "./ui.js";

const STALE = "Someone changed this rotation since you opened it; reload to see who is up now.";
const BUSY = "A turn of this rotation is being posted right now; try again in a moment.";

// "5 Jan 2027, 09:30 CET (yours: 5 Jan 2027, 03:30 EST)": the team's time, then the viewer's.
export function bothZones(at, zone) {
  const team = formatInstant(at, zone);
  return zone && zone !== viewerZone() ? `${team} (yours: ${formatInstant(at)})` : team;
}

// "Mon 4 Jan 2027" for a local date "2027-01-04" (the rotation's day, whatever the viewer's zone).
function dayWords(date) {
  const [y, m, d] = String(date).split("-").map(Number);
  if (![y, m, d].every(Number.isFinite)) return String(date);
  return new Intl.DateTimeFormat(undefined, { timeZone: "UTC", weekday: "short", day: "numeric", month: "short", year: "numeric" })
    .format(new Date(Date.UTC(y, m - 1, d)));
}

// One line for the list: "up today: @Ana · up next: @Bob, 5 Jan 2027, 09:30 CET (yours: …)".
export function upLine(rotation) {
  const up = rotation.up;
  if (!up) {
    return rotation.next_run_at ? `next turn ${bothZones(rotation.next_run_at, rotation.timezone)}` : "no turn ahead";
  }
  const parts = [];
  if (up.today) parts.push(`up today: ${nameOf(up.today.member, rotation.names) || "nobody"}`);
  parts.push(up.next
    ? `up next: ${nameOf(up.next.member, rotation.names) || "nobody"}, ${bothZones(up.next.at, rotation.timezone)}`
    : "no turn ahead");
  return parts.join(" · ");
}

// The detail's "Who is up" box with the swap form; `changed(rotation)` gets the swapped answer,
// `reload()` reopens the rotation after a 412.
export function upPanel(rotation, { changed, reload }) {
  const names = rotation.names ?? {};
  const up = rotation.up ?? {};
  const facts = el("dl", { class: "rot-up-facts" },
    el("dt", {}, "Up today"),
    el("dd", { class: "rot-up-today" }, up.today ? `${nameOf(up.today.member, names) || "nobody (everyone is out)"}, ${dayWords(up.today.date)}` : "no turn today"),
    el("dt", {}, "Up next"),
    el("dd", { class: "rot-up-next" }, up.next
      ? `${nameOf(up.next.member, names)}, ${bothZones(up.next.at, rotation.timezone)}`
      : "no turn ahead"));
  const members = Array.isArray(rotation.members) ? rotation.members : [];
  const section = el("section", { class: "preview rot-up", "aria-labelledby": `rot-up-${rotation.id}` },
    el("h3", { id: `rot-up-${rotation.id}` }, "Who is up"), facts);
  if (members.length >= 2 && rotation.status !== "completed") {
    section.append(swapForm(rotation, members, names, { changed, reload }));
  }
  return section;
}

function swapForm(rotation, members, names, { changed, reload }) {
  const pick = (id, label, selected) => field(label, el("select", { id, name: "members" },
    members.map((member, index) => {
      const option = el("option", { value: member }, nameOf(member, names));
      option.selected = index === selected;
      return option;
    })));
  const first = pick(`rot-swap-a-${rotation.id}`, "First member", 0);
  const second = pick(`rot-swap-b-${rotation.id}`, "Second member", 1);
  const problems = el("div", { class: "form-problems", hidden: true });
  const submit = el("button", { type: "submit" }, "Swap turns");
  const form = el("form", { class: "rot-swap", novalidate: true, "aria-label": "Swap two members' turns" },
    el("p", { class: "hint" }, "The two trade places in the turn order, so each takes the other's next turn."),
    first, second, problems, el("div", { class: "actions" }, submit));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearProblems(form);
    const chosen = [...form.querySelectorAll("select")].map((select) => select.value);
    submit.disabled = true;
    const path = `/rotations/${encodeURIComponent(rotation.id)}/swap`;
    const answer = await api("POST", path, { body: { members: chosen }, ifMatch: rotation.version });
    submit.disabled = false;
    if (answer.status === 200) {
      changed(answer.data, `Swapped: ${chosen.map((id) => nameOf(id, names)).join(" and ")} traded turns.`);
    } else if (answer.status === 412) {
      notice(problems, STALE, { alert: true, actions: [el("button", { type: "button", class: "primary", onclick: reload }, "Reload")] });
    } else if (answer.status === 422) {
      showProblems(form, answer);
    } else if (answer.status !== 401) {
      notice(problems, answer.status === 409 ? BUSY : answer.data?.message ?? `The API answered ${answer.status}.`, { alert: true });
    }
  });
  return form;
}
