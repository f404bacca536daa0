// Name pickers: a text field with type-ahead over the API's directory (GET /directory/channels,
// GET /directory/users; debounced), in the ARIA combobox pattern: arrows move through the
// suggestions, Enter picks one, Escape closes them. Channels show as "#name" (Teams
// conversations by their name, marked Teams), people as "@Real Name"; the chosen one's id is
// shown under the field. An id typed as is (C0123ABCD, U0123ABCD) is kept as typed.
//
// namePicker({id, name, label, hint, kind: "channels"|"users", onChange}) →
//   {root, input, value() → {id, platform} | null, set(id, names), clear()}
import { api } from "./api.js";
import { nameOf } from "./names.js";
import { el, field, linkStyles } from "./ui.js";

const SEARCH_DELAY_MS = 250;
const SHOWN = 20;

export function namePicker({ id, name, label, hint, kind, onChange }) {
  linkStyles("compose.css");
  const listId = `${id}-options`;
  const input = el("input", {
    id, name, type: "text", role: "combobox", autocomplete: "off", spellcheck: "false",
    "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": listId,
  });
  const list = el("ul", { id: listId, role: "listbox", "aria-label": `${label} suggestions`, hidden: true });
  const chosenNote = el("p", { class: "hint", id: `${id}-chosen`, hidden: true });
  const root = field(label, input, hint);
  root.classList.add("combo");
  root.append(list, chosenNote);
  const state = { options: [], active: -1, chosen: null, timer: null, seq: 0 };

  async function search() {
    const seq = ++state.seq;
    const q = input.value.trim().replace(/^[#@]/, "");
    const answer = await api("GET", `/directory/${kind}?${new URLSearchParams({ q })}`);
    if (seq !== state.seq || document.activeElement !== input) return;
    const found = answer.status === 200 ? answer.data[kind] ?? [] : [];
    state.options = found.slice(0, SHOWN).map((entry) => option(kind, entry));
    state.active = -1;
    render();
  }

  function render() {
    list.replaceChildren(...state.options.map((choice, i) => {
      const item = el("li", {
        id: `${listId}-${i}`, role: "option", "aria-selected": String(i === state.active),
        title: choice.id,
      }, choice.label, choice.note ? el("span", { class: "hint" }, ` ${choice.note}`) : null);
      item.addEventListener("mousedown", (event) => event.preventDefault()); // keeps focus
      item.addEventListener("click", () => choose(choice));
      return item;
    }));
    const open = state.options.length > 0;
    list.hidden = !open;
    input.setAttribute("aria-expanded", String(open));
    if (state.active >= 0) input.setAttribute("aria-activedescendant", `${listId}-${state.active}`);
    else input.removeAttribute("aria-activedescendant");
    list.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: "nearest" });
  }

  function close() {
    state.options = [];
    state.active = -1;
    render();
  }

  function choose(choice) {
    state.chosen = choice;
    input.value = choice.label;
    showChosen();
    close();
    onChange?.();
  }

  function showChosen() {
    const chosen = current();
    const named = chosen && state.chosen && chosen.id === state.chosen.id;
    chosenNote.hidden = !named;
    chosenNote.textContent = named ? `${state.chosen.label}: id ${chosen.id}` : "";
  }

  // The chosen entry while the field still shows its name; otherwise what was typed (an id).
  function current() {
    if (state.chosen && input.value === state.chosen.label) {
      return { id: state.chosen.id, platform: state.chosen.platform };
    }
    const typed = input.value.trim();
    return typed ? { id: typed, platform: "slack" } : null;
  }

  input.addEventListener("input", () => {
    showChosen();
    clearTimeout(state.timer);
    state.timer = setTimeout(search, SEARCH_DELAY_MS);
  });
  input.addEventListener("keydown", (event) => {
    const count = state.options.length;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!count) return void search();
      const step = event.key === "ArrowDown" ? 1 : -1;
      state.active = (state.active + step + count) % count;
      render();
    } else if (event.key === "Enter" && count && state.active >= 0) {
      event.preventDefault(); // picks; does not submit the form
      choose(state.options[state.active]);
    } else if (event.key === "Escape" && count) {
      event.preventDefault();
      close();
    }
  });
  input.addEventListener("blur", () => close());

  return {
    root, input,
    value: current,
    set(ident, names, platform = "slack") {
      state.chosen = ident ? { id: ident, label: nameOf(ident, names), platform } : null;
      input.value = ident ? nameOf(ident, names) : "";
      showChosen();
    },
    clear() {
      state.chosen = null;
      input.value = "";
      showChosen();
      close();
    },
  };
}

// A directory entry as a suggestion: what it is called, and a note (Teams, private…).
function option(kind, entry) {
  if (kind === "users") {
    const label = `@${entry.real_name || entry.name}`;
    return { id: entry.id, label, note: entry.real_name ? `@${entry.name}` : "", platform: "slack" };
  }
  if (entry.platform === "teams") {
    return { id: entry.id, label: entry.name, note: "(Microsoft Teams)", platform: "teams" };
  }
  const notes = [entry.is_private ? "private" : "", entry.is_member ? "" : "app not in it"];
  const note = notes.filter(Boolean).join(", ");
  return { id: entry.id, label: `#${entry.name}`, note: note ? `(${note})` : "", platform: "slack" };
}
