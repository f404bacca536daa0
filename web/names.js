// Ids shown as people say them: "#general", "@Ana Lima", a Teams conversation's name, from an
// answer's `names` map (id → name, filled by the API from its directory cache); an id the map
// lacks is shown as itself. The id stays one click away: a small "id" button beside the name.
import { el, linkStyles } from "./ui.js";

// "#general" for "C0123ABCD" when `names` knows it, else the id itself.
export function nameOf(id, names) {
  if (!id) return "";
  return names && Object.hasOwn(names, id) ? names[id] : id;
}

// Where a message or rotation goes: its channel, person or Teams conversation's id.
export function destinationOf(record) {
  return record.channel ?? record.user ?? record.teams_conversation ?? null;
}

// A name with its id one click away (an "id" toggle); just the id when no name is known.
export function nameNode(id, names) {
  linkStyles("compose.css");
  const name = nameOf(id, names);
  if (!id || name === id) return el("span", { class: "name" }, id ?? "—");
  const shown = el("code", { hidden: true }, id);
  const toggle = el("button", {
    type: "button", class: "id-toggle", "aria-expanded": "false",
    "aria-label": `id of ${name}`, title: `Show the id of ${name}`,
  }, "id");
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    shown.hidden = !open;
  });
  return el("span", { class: "name" }, name, toggle, shown);
}

// A message's text with its mentions (<@U…>, <#C…|label>) as the names Slack would show.
export function withNames(text, names) {
  return text.replace(/<([@#])([A-Z0-9]+)(?:\|([^<>]*))?>/g, (whole, sigil, id, label) =>
    names && Object.hasOwn(names, id) ? names[id] : `${sigil}${label || id}`);
}

// A failure as a team lead can act on it: the catalog's title and action, with the channel
// by name (a `{channel}` left in them, or its id, becomes its "#name"), and what the failure
// itself said (`detail`, e.g. which timezone is unknown).
export function failureWords(record) {
  const error = record.last_error;
  if (!error) return null;
  const id = destinationOf(record);
  const where = nameOf(id, record.names) || "the channel";
  const help = error.help;
  const detail = error.message && error.message !== error.code ? error.message : "";
  if (!help) return { title: error.code, action: "", detail };
  const fill = (words) => {
    const filled = (words ?? "").replaceAll("{channel}", where);
    return id ? filled.replaceAll(id, where) : filled;
  };
  return { title: fill(help.title), action: fill(help.action), detail };
}

// Who made a record and who last changed it (`created_by`, `updated_by`: a Slack user id,
// shown by name, or an email or `admin`, shown as they are), as [term, value] rows; none for
// a record written straight to Firestore without them.
export function whoRows(record) {
  const rows = [];
  if (record.created_by) rows.push(["Created by", nameNode(record.created_by, record.names)]);
  if (record.updated_by) rows.push(["Last changed by", nameNode(record.updated_by, record.names)]);
  return rows;
}
