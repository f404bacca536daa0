// The People section: type a Slack user id, see which categories of messages that person
// receives, and change it (GET/PUT /preferences/{user}). Must-read categories are shown
// ticked and disabled, with the reason. Also `loadCategories()`, the message form's list.
import { api } from "./api.js";
import { clearProblems, el, field, notice, showProblems } from "./ui.js";

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const MUST_READ = "Must-read: nobody can opt out of this category.";

// The categories a message may have: [{id, label, opt_out_allowed, ...}], [] if unreadable.
export async function loadCategories() {
  const answer = await api("GET", "/categories");
  return answer.status === 200 ? answer.data.categories : [];
}

export function mountPeople(container) {
  const finder = el("form", { class: "filters", "aria-label": "Find a person" },
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
  const editor = el("form", { novalidate: true, "aria-labelledby": "p-prefs-heading", hidden: true },
    heading, choices, el("div", { class: "form-problems", hidden: true }),
    el("div", { class: "actions" }, save));
  container.append(el("h2", {}, "People"), finder, status, editor);
  let user = null;

  async function show(event) {
    event.preventDefault();
    clearProblems(finder);
    notice(status, "");
    const typed = finder.elements.user.value.trim();
    if (!USER_ID.test(typed)) {
      const message = `${typed ? `"${typed}"` : "Nothing"} is not a Slack user id such as U0123ABCD`;
      showProblems(finder, { data: { details: [{ field: "user", message }] } });
      return;
    }
    const answer = await api("GET", `/preferences/${encodeURIComponent(typed)}`);
    if (answer.status !== 200) {
      const why = answer.data?.message ?? answer.status;
      if (answer.status !== 401) notice(status, `Could not read preferences: ${why}`, { alert: true });
      return;
    }
    user = typed;
    render(answer.data);
    heading.focus();
  }

  function render(prefs) {
    heading.textContent = `Preferences of ${prefs.user}`;
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
    if (!rows.length) rows.push(el("p", { class: "hint" }, "No categories are defined yet."));
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
      notice(status, `Saved: ${user} opted out of ${count} categor${count === 1 ? "y" : "ies"}.`);
    } else if (answer.status !== 401) {
      showProblems(editor, answer);
    }
  }

  finder.addEventListener("submit", show);
  editor.addEventListener("submit", store);
}
