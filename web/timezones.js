// The timezone control: a text field with a searchable list (<input list> + <datalist>) of
// every IANA zone this browser knows, defaulting to the viewer's own zone. A name the list
// lacks can still be typed: the API decides, and its 422 sits beside the field.
import { viewerZone } from "./time.js";
import { el, field } from "./ui.js";

const ZONES = ["UTC", ...Intl.supportedValuesOf("timeZone").filter((zone) => zone !== "UTC")];

// A labelled field `Timezone` (input `id`, `name`) and its list; answers {root, input}.
export function timezoneField(id, name = "timezone", label = "Timezone") {
  const listId = `${id}-zones`;
  const input = el("input", {
    id, name, type: "text", list: listId, autocomplete: "off", spellcheck: "false",
    value: viewerZone(),
  });
  const list = el("datalist", { id: listId }, ZONES.map((zone) => el("option", { value: zone })));
  const root = field(label, input,
    `Type to search, e.g. Berlin or New_York; yours is ${viewerZone()}`);
  root.append(list);
  return { root, input };
}
