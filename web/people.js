// The People section: pick a person from the workspace's people (web/people_list.js, by
// name) or type a Slack user id, see which categories of messages that person receives, and
// change it (GET/PUT /preferences/{user}). Must-read categories are shown ticked and
// disabled, with the reason; with no category at all there is nothing to save, and the page
// says how one is made. Also `loadCategories()`, the message form's list.
import { api } from "./api.js";
import { peopleList } from "./people_list.js";
import { clearProblems, el, field, notice, showProblems } from "./ui.js";

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const MUST_READ = "Must-read: nobody can opt out of this category.";
const NO_CATEGORIES =
  "No categories exist yet, so there is nothing to choose. An operator creates one as a " +
  "categories/{id} document in Firestore (label, opt_out_allowed); see docs/data-model.md, " +
  "Categories and preferences.";

// The categories a message may have: [{id, label, opt_out_allowed, ...}], [] if unreadable.
export async function loadCategories() {
  const answer = await api("GET", "/categories");
  return answer.status === 200 ? answer.data.categories : [];
}

export function mountPeople(container) {
  const finder = el("form", { class: "filters", "aria-label": "Preferences by id" },
    field("Slack user id", el("input", {
      id: "p-user", name: "user", type: "text", placeholder: "U0123ABCD",
      autocomplete: "off", spellcheck: "false",
    }), "The person's member id, e.g. U0123ABCD (Slack profile → ⋮ → Copy member ID)"),
    el("div", { class: "form-problems", hidden: true }),
    el("button", { type: "submit" }, "Show preferences"));
  const heading = el("h3", { id: "p-prefs-heading", tabindex: "-1" });
  const choices = el("fieldset", { "data-field": "opted_out" },
    el("legend", {}, "Receives messages of these categories"));
  const status = el("div", { class: "notice", hidden: true });
  const save = el("button", { type: "submit", class: "primary" }, "Save preferences");
  const actions = el("div", { class: "actions" }, save);
  const editor = el("form", { novalidate: true, "aria-labelledby": "p-prefs-heading", hidden: true },
    heading, choices, el("div", { class: "form-problems", hidden: true }), actions);
  container.append(el("h2", {}, "People"), peopleList((id, name) => showFor(id, name)),
    finder, status, editor);
  let user = null;
  let shownName = null;

  function show(event) {
    event.preventDefault();
    clearProblems(finder);
    const typed = finder.elements.user.value.trim();
    if (!USER_ID.test(typed)) {
      const message = `${typed ? `"${typed}"` : "Nothing"} is not a Slack user id such as U0123ABCD`;
      showProblems(finder, { data: { details: [{ field: "user", message }] } });
      return;
    }
    showFor(typed, null);
  }

  async function showFor(id, name) {
    notice(status, "");
    const answer = await api("GET", `/preferences/${encodeURIComponent(id)}`);
    if (answer.status !== 200) {
      const why = answer.data?.message ?? answer.status;
      if (answer.status !== 401) notice(status, `Could not read preferences: ${why}`, { alert: true });
      return;
    }
    user = id;
    shownName = name;
    render(answer.data);
    heading.focus();
  }

  function render(prefs) {
    heading.textContent = `Preferences of ${shownName ?? prefs.user}`;
    const out = new Set(prefs.opted_out);
    const rows = prefs.categories.map((category, index) => {
      const id = `p-cat-${index}`;
      const locked = !category.opt_out_allowed;
      const box = el("input", {
        id, type: "checkbox", name: "receives", value: category.id,
        checked: locked || !out.has(category.id), disabled: locked,
        "aria-describedby": locked ? `${id}-why` : null,
      });
      return el("div", { class: "field choice" }, box,
        el("label", { for: id }, category.label),
        locked ? el("p", { id: `${id}-why`, class: "hint" }, MUST_READ) : null);
    });
    if (!rows.length) rows.push(el("p", { class: "hint p-no-categories" }, NO_CATEGORIES));
    // Nothing to save without a category: no button that would only store an empty list.
    actions.hidden = !prefs.categories.length;
    choices.replaceChildren(choices.querySelector("legend"), ...rows);
    clearProblems(editor);
    editor.hidden = false;
  }

  async function store(event) {
    event.preventDefault();
    clearProblems(editor);
    notice(status, "");
    const boxes = [...editor.querySelectorAll('input[name="receives"]:not(:disabled)')];
    const out = boxes.filter((box) => !box.checked);
    // A 422 names `opted_out.<i>`, the i-th id sent: that box shows the message.
    for (const box of boxes) delete box.dataset.field;
    out.forEach((box, index) => { box.dataset.field = `opted_out.${index}`; });
    const body = { opted_out: out.map((box) => box.value) };
    save.disabled = true;
    let answer;
    try {
      answer = await api("PUT", `/preferences/${encodeURIComponent(user)}`, { body });
    } finally {
      save.disabled = false;
    }
    if (answer.status === 200) {
      render(answer.data);
      const count = answer.data.opted_out.length;
      notice(status, `Saved: ${shownName ?? user} opted out of ${count} categor${count === 1 ? "y" : "ies"}.`);
    } else if (answer.status !== 401) {
      showProblems(editor, answer);
    }
  }

  finder.addEventListener("submit", show);
  editor.addEventListener("submit", store);
}
