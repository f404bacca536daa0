// A rotation's away periods: a member out from one date to another (inclusive local dates in
// the rotation's timezone), skipped on those days exactly as a skip date skips them. Edited
// in the rotation form beside the single skip dates; saved with it (`away` in PUT/POST).
import { el, field } from "./ui.js";
import { nameOf } from "./names.js";

let serial = 0;

// `state.away`: [{member, from, to}] (edited in place); `state.members`: [{id}] in turn order.
// Answers {node, render}: render again when the members change.
export function awayEditor(state, names) {
  const box = el("fieldset", { "data-field": "away", class: "rot-away" });

  function row(period, position) {
    const label = `Away period ${position + 1}`;
    const stem = `rot-away-${++serial}`;
    const member = el("select", { id: `${stem}-m`, "data-field": `away.${position}.member` },
      el("option", { value: "" }, "Choose a member"),
      state.members.filter((m) => m.id).map((m) => el("option", { value: m.id }, nameOf(m.id, names))));
    member.value = period.member;
    const from = el("input", { type: "date", id: `${stem}-f`, "data-field": `away.${position}.from` });
    const to = el("input", { type: "date", id: `${stem}-t`, "data-field": `away.${position}.to` });
    from.value = period.from;
    to.value = period.to;
    member.addEventListener("change", () => { period.member = member.value; });
    from.addEventListener("change", () => {
      period.from = from.value;
      if (!to.value || to.value < from.value) to.value = period.to = from.value;
    });
    to.addEventListener("change", () => { period.to = to.value; });
    const remove = el("button", {
      type: "button", "aria-label": `Remove ${label.toLowerCase()}`,
      onclick: () => {
        state.away.splice(position, 1);
        render();
        box.querySelector("button.rot-add-away").focus();
      },
    }, "Remove");
    return el("li", {}, el("fieldset", { class: "rot-away-row" }, el("legend", {}, label),
      field(`${label}: member`, member), field("From", from), field("To (inclusive)", to), remove));
  }

  function render() {
    const rows = el("ul", { class: "rot-away-list" }, state.away.map(row));
    const add = el("button", {
      type: "button", class: "rot-add-away",
      onclick: () => {
        state.away.push({ member: "", from: "", to: "" });
        render();
        box.querySelector(".rot-away-list > li:last-child select").focus();
      },
    }, "Add an away period");
    box.replaceChildren(el("legend", {}, "Away periods: a member out from one date to another"),
      el("p", { class: "hint" }, "Dates in the rotation's timezone; their turns go to the next member in line."),
      rows, add);
  }

  render();
  return { node: box, render };
}

// The periods worth sending: complete ones, as the API takes them.
export function awayBody(state) {
  return state.away
    .filter((period) => period.member && period.from && period.to)
    .map(({ member, from, to }) => ({ member, from, to }));
}
