// DOM helpers. User text only ever becomes text nodes (textContent), never HTML.
export { formatInstant } from "./time.js";

// <tag attrs...>children</tag>; `on<event>` attrs take functions, strings become text nodes.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) {
      if (typeof value !== "function") throw new TypeError(`${name} takes a function`);
      node.addEventListener(name.slice(2), value);
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// A status line for screen readers and eyes: role=status (polite) or role=alert.
export function notice(container, text, { alert = false, actions = [] } = {}) {
  container.replaceChildren();
  container.hidden = !text;
  if (!text) return;
  container.setAttribute("role", alert ? "alert" : "status");
  container.classList.toggle("alert", alert);
  append(container, [el("span", {}, text), ...actions]);
}

// Each 422 detail's message next to the field it names (by `name` or `data-field`), tied to
// it with aria-describedby; anything else in the form's `.form-problems` box. Answers how
// many problems were shown; focuses the first named field.
export function showProblems(form, answer) {
  clearProblems(form);
  const box = form.querySelector(".form-problems");
  const details = answer?.data?.details?.length ? answer.data.details : [];
  const loose = [];
  let first = null;
  for (const detail of details) {
    const field = fieldFor(form, String(detail.field ?? ""));
    if (!field) {
      loose.push(`${detail.field}: ${detail.message}`);
      continue;
    }
    const id = `${field.id || field.name}-problem`;
    const message = el("p", { id, class: "problem" }, detail.message);
    (field.closest(".field") ?? field).after(message);
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", [field.dataset.hint, id].filter(Boolean).join(" "));
    first ??= field;
  }
  if (!details.length && answer?.data?.message) loose.push(answer.data.message);
  if (box && loose.length) notice(box, loose.join("; "), { alert: true });
  first?.focus();
  return details.length || loose.length;
}

export function clearProblems(form) {
  for (const message of form.querySelectorAll(".problem")) message.remove();
  for (const field of form.querySelectorAll("[aria-invalid]")) {
    field.removeAttribute("aria-invalid");
    if (field.dataset.hint) field.setAttribute("aria-describedby", field.dataset.hint);
    else field.removeAttribute("aria-describedby");
  }
  const box = form.querySelector(".form-problems");
  if (box) notice(box, "");
}

function fieldFor(form, name) {
  // "working_days.country" names a nested field; fall back to its parent.
  for (let key = name; key; key = key.includes(".") ? key.replace(/\.[^.]*$/, "") : "") {
    const quoted = CSS.escape(key);
    const field = form.querySelector(`[data-field="${quoted}"], [name="${quoted}"]`);
    if (field) return field;
  }
  return null;
}

// A labelled form control: <div class="field"><label/>control<p hint/></div>.
export function field(label, control, hint) {
  const parts = [el("label", { for: control.id }, label), control];
  if (hint) {
    const hintId = `${control.id}-hint`;
    parts.push(el("p", { id: hintId, class: "hint" }, hint));
    control.dataset.hint = hintId;
    control.setAttribute("aria-describedby", hintId);
  }
  return el("div", { class: "field" }, parts);
}

// A stylesheet of web/ linked once (a module's own styles, beside app.css; CSP: 'self').
export function linkStyles(file) {
  if (document.querySelector(`link[data-styles="${CSS.escape(file)}"]`)) return;
  const href = new URL(`static/${file}`, document.baseURI).href;
  document.head.append(el("link", { rel: "stylesheet", href, "data-styles": file }));
}
