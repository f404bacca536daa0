// The workspace's people (GET /directory/users, Slack's names as the API caches them), by
// name, searchable (the API's `q`, debounced) and paged; choosing one calls
// `pick(id, "Real Name")`, whose preferences the People section then shows.
import { api } from "./api.js";
import { el, field, notice } from "./ui.js";

const DEBOUNCE_MS = 300;

export function peopleList(pick) {
  const search = el("input", { id: "p-find", name: "q", type: "search", autocomplete: "off" });
  const status = el("p", { class: "hint", role: "status" });
  const list = el("ul", { class: "p-people", "aria-label": "People" });
  const more = el("button", { type: "button", hidden: true }, "More people");
  const section = el("section", { class: "p-directory", "aria-labelledby": "p-people-heading" },
    el("h3", { id: "p-people-heading" }, "People in the workspace"),
    field("Find a person", search, "By name; choose one to see what they receive."),
    status, list, more);
  let cursor = null;
  let ticket = 0;
  let timer = null;

  async function load(next = null) {
    const mine = ++ticket;
    const query = new URLSearchParams();
    if (search.value.trim()) query.set("q", search.value.trim());
    if (next) query.set("cursor", next);
    const answer = await api("GET", `/directory/users${query.size ? `?${query}` : ""}`);
    if (mine !== ticket) return;
    if (answer.status !== 200) {
      if (answer.status !== 401) notice(status, `The list of people could not be read: ${answer.data?.message ?? answer.status}`);
      return;
    }
    if (!next) list.replaceChildren();
    list.append(...answer.data.users.map(person));
    cursor = answer.data.next_cursor ?? null;
    more.hidden = !cursor;
    status.textContent = list.children.length ? "" : "Nobody matches.";
  }

  function person(user) {
    const name = user.real_name || user.name || user.id;
    return el("li", {},
      el("button", { type: "button", class: "p-person", "data-user": user.id, onclick: () => pick(user.id, name) }, name),
      user.name && user.name !== name ? el("span", { class: "hint" }, ` @${user.name}`) : null);
  }

  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => load(), DEBOUNCE_MS);
  });
  more.addEventListener("click", () => load(cursor));
  load();
  return section;
}
