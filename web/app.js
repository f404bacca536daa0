// Entry point: sign in, then show the section the hash names (#/messages, #/rotations,
// #/people).
import { forget, signIn } from "./signin.js";
import { mountMessages } from "./messages.js";
import { mountPeople } from "./people.js";
import { mountRotations } from "./rotations.js";

const SECTIONS = { messages: mountMessages, rotations: mountRotations, people: mountPeople };
const mounted = new Set();

function current() {
  const name = location.hash.replace(/^#\/?/, "").split("/")[0];
  return name in SECTIONS ? name : "messages";
}

function route() {
  const name = current();
  for (const key of Object.keys(SECTIONS)) {
    document.getElementById(key).hidden = key !== name;
  }
  for (const link of document.querySelectorAll("nav a[data-route]")) {
    if (link.dataset.route === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!mounted.has(name)) {
    mounted.add(name);
    SECTIONS[name](document.getElementById(name));
  }
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
