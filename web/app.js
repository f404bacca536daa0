// Entry point: sign in, then show the view the hash names. Every view has its own URL, so a
// reload keeps it and back/forward move between views:
//   #/agenda, #/messages, #/messages/{id}, #/rotations, #/rotations/{id}, #/people
import { forget, signIn } from "./signin.js";
import { mountAgenda } from "./agenda.js";
import { mountMessages } from "./messages.js";
import { mountPeople } from "./people.js";
import { mountRotations } from "./rotations.js";

const SECTIONS = {
  agenda: mountAgenda,
  messages: mountMessages,
  rotations: mountRotations,
  people: mountPeople,
};
// What a visit to a section's URL shows: a rotation's own view (#/rotations/<id>; a `null`
// id: the list alone), or the agenda's range and search (#/agenda?from=&to=&q=). Messages
// follow #/messages/<id> themselves (messages.js's showMessage).
const DETAILS = {
  agenda: (view) => view.show(),
  rotations: (view, id) => view.show(id),
};
const mounted = new Map();

// "#/rotations/abc?x" → {name: "rotations", id: "abc"}; an unknown section is Messages.
export function parseHash(hash) {
  const [path] = hash.replace(/^#\/?/, "").split("?");
  const [name, ...rest] = path.split("/");
  if (!(name in SECTIONS)) return { name: "messages", id: null };
  const raw = rest.join("/");
  let id = null;
  try {
    id = raw ? decodeURIComponent(raw) : null;
  } catch {
    id = null; // a malformed escape: the section alone
  }
  return { name, id };
}

function route() {
  const { name, id } = parseHash(location.hash);
  for (const key of Object.keys(SECTIONS)) {
    document.getElementById(key).hidden = key !== name;
  }
  for (const link of document.querySelectorAll("nav a[data-route]")) {
    if (link.dataset.route === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!mounted.has(name)) {
    mounted.set(name, SECTIONS[name](document.getElementById(name)));
  }
  DETAILS[name]?.(mounted.get(name), id);
}

async function start() {
  await signIn(); // a kept token is checked first: no section shows before it is accepted
  const signOut = document.getElementById("sign-out");
  signOut.hidden = false;
  signOut.addEventListener("click", () => {
    forget();
    location.reload();
  });
  window.addEventListener("hashchange", route);
  route();
}

start();
