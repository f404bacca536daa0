// The Messages section.
import { el } from "./ui.js";

export function mountMessages(container) {
  container.append(el("h2", {}, "Messages"));
}
