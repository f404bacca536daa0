// The answers to a message's buttons (GET /messages/{id}/responses), newest first: who
// answered, the action's label (from the message's catalog), when, and whether the Slack
// message shows it yet. Text only: every value lands as a text node (ui.js's el).
import { api } from "./api.js";
import { el, formatInstant } from "./ui.js";

export async function showResponses(container, message) {
  if (!message.actions?.length) return;
  const path = `/messages/${encodeURIComponent(message.id)}/responses?limit=100`;
  const answer = await api("GET", path);
  const box = el("div", { class: "responses" });
  if (answer.status !== 200) {
    box.append(el("p", {}, `Answers unavailable: ${answer.data?.message ?? answer.status}`));
  } else if (!answer.data.responses.length) {
    box.append(el("p", {}, "Nobody answered yet."));
  } else {
    box.append(el("div", { class: "scroll" }, table(message, answer.data.responses)));
  }
  container.querySelector(".responses")?.remove();
  container.append(box);
}

function table(message, responses) {
  const headings = ["Who", "Answer", "When", "Shown in Slack"];
  return el(
    "table",
    { class: "history answers" },
    el("caption", {}, "Answers"),
    el("thead", {}, el("tr", {}, headings.map((text) => el("th", { scope: "col" }, text)))),
    el("tbody", {}, responses.map((response) => row(response, message.timezone))),
  );
}

function row(response, zone) {
  const cells = {
    Who: response.user ?? "—",
    Answer: response.label ?? response.action_id ?? "—",
    When: response.answered_at ? formatInstant(response.answered_at, zone) : "—",
    "Shown in Slack": response.shown ? "yes" : "not yet",
  };
  return el(
    "tr",
    {},
    Object.entries(cells).map(([label, value]) => el("td", { "data-label": label }, value)),
  );
}
