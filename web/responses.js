// The answers to the buttons of a message or a rotation (GET /messages/{id}/responses,
// GET /rotations/{id}/responses), newest first: who answered, the action's label (from the
// catalog the post was sent with), when, and whether the Slack message shows it yet. Text
// only: every value lands as a text node (ui.js's el).
import { api } from "./api.js";
import { el, formatInstant } from "./ui.js";

// `subject`: a stored message, or a rotation with `collection` "rotations".
export async function showResponses(container, subject, collection = "messages") {
  if (!subject.actions?.length) return;
  const path = `/${collection}/${encodeURIComponent(subject.id)}/responses?limit=100`;
  const answer = await api("GET", path);
  const box = el("div", { class: "responses" });
  if (answer.status !== 200) {
    box.append(el("p", {}, `Answers unavailable: ${answer.data?.message ?? answer.status}`));
  } else if (!answer.data.responses.length) {
    box.append(el("p", {}, "Nobody answered yet."));
  } else {
    box.append(el("div", { class: "scroll" }, table(subject, answer.data.responses)));
  }
  container.querySelector(".responses")?.remove();
  container.append(box);
}

function table(subject, responses) {
  const headings = ["Who", "Answer", "When", "Shown in Slack"];
  return el(
    "table",
    { class: "history answers" },
    el("caption", {}, "Answers"),
    el("thead", {}, el("tr", {}, headings.map((text) => el("th", { scope: "col" }, text)))),
    el("tbody", {}, responses.map((response) => row(response, subject.timezone))),
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
