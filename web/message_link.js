// A message's own view at #/messages/{id} until web/messages.js exports `showMessage(id)`:
// the message read from the API, shown above the list with its status, destination, text
// and schedule in words, its heading focused. User text stays text (ui.js's `el`).
import { api } from "./api.js";
import { el, formatInstant, notice } from "./ui.js";

export async function showMessageFallback(id) {
  const section = document.getElementById("messages");
  let box = document.getElementById("message-detail");
  if (!box) {
    box = el("section", { id: "message-detail", class: "message", "aria-labelledby": "md-heading" });
    section.prepend(box);
  }
  const answer = await api("GET", `/messages/${encodeURIComponent(id)}`);
  if (answer.status !== 200) {
    const status = el("div", { class: "notice" });
    box.replaceChildren(status);
    notice(status, `Message ${id} could not be opened: ${answer.data?.message ?? answer.status}`, { alert: true });
    return;
  }
  const message = answer.data;
  const names = message.names ?? {};
  const to = message.channel ?? message.user ?? message.teams_conversation ?? "";
  const heading = el("h2", { id: "md-heading", tabindex: "-1" }, `Message to ${names[to] ?? to}`);
  box.replaceChildren(
    heading,
    el("p", {}, el("span", { class: `status status-${message.status}` }, message.status)),
    el("p", { class: "text" }, message.text ?? ""),
    el("dl", {},
      el("dt", {}, "Schedule"), el("dd", {}, message.schedule_text ?? message.rrule ?? "once"),
      el("dt", {}, "Next run (your time)"), el("dd", {}, formatInstant(message.next_run_at))),
  );
  heading.focus();
}
