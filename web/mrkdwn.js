// Slack mrkdwn (as POST /preview returns it) as DOM nodes, the way Slack shows it: *bold*,
// _italics_, ~strike~, `code`, ``` blocks ```, > quotes, <url|links>, <@user> and <#channel>
// mentions (shown by name when `names`, the answer's id → "#name"/"@Name" map, knows the id,
// as Slack shows them). Everything is built from text nodes: the source never becomes HTML.
import { el } from "./ui.js";

const FENCE = /```([\s\S]*?)```/g;
// Entities, code, then the emphasis markers (which nest); a marker needs a non-word
// character or the line's edge outside it, as in Slack (snake_case stays literal).
const INLINE =
  /<([^<>\n]+)>|`([^`\n]+)`|(?<![\w*])\*(?!\s)([^*\n]+?)\*(?![\w*])|(?<![\w_])_(?!\s)([^_\n]+?)_(?![\w_])|(?<![\w~])~(?!\s)([^~\n]+?)~(?![\w~])/g;
const SAFE_URL = /^(https?:|mailto:)/i;

// Slack escapes only these three in message text.
export function unescape(text) {
  return text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

export function renderMrkdwn(text, names = {}) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(FENCE)) {
    nodes.push(...lines(text.slice(last, match.index), names));
    nodes.push(el("pre", {}, el("code", {}, unescape(match[1].replace(/^\n|\n$/g, "")))));
    last = match.index + match[0].length;
  }
  nodes.push(...lines(text.slice(last), names));
  return el("div", { class: "slack" }, nodes);
}

function lines(text, names) {
  const nodes = [];
  let quote = null;
  if (!text.trim()) return nodes;
  for (const line of text.replace(/^\n|\n$/g, "").split("\n")) {
    const quoted = /^(>|&gt;) ?(.*)$/.exec(line);
    if (quoted) {
      quote ??= el("blockquote", {});
      quote.append(el("div", { class: "line" }, inline(quoted[2], names)));
      continue;
    }
    if (quote) nodes.push(quote);
    quote = null;
    nodes.push(el("div", { class: "line" }, inline(line, names)));
  }
  if (quote) nodes.push(quote);
  return nodes;
}

function inline(text, names) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    nodes.push(unescape(text.slice(last, match.index)));
    const [, entity, code, bold, italic, strike] = match;
    if (entity !== undefined) nodes.push(renderEntity(entity, names ?? {}));
    else if (code !== undefined) nodes.push(el("code", {}, unescape(code)));
    else if (bold !== undefined) nodes.push(el("strong", {}, inline(bold, names)));
    else if (italic !== undefined) nodes.push(el("em", {}, inline(italic, names)));
    else nodes.push(el("s", {}, inline(strike, names)));
    last = match.index + match[0].length;
  }
  nodes.push(unescape(text.slice(last)));
  return nodes.filter((node) => node !== "");
}

function renderEntity(entity, names) {
  const [target, label] = splitOnce(entity, "|");
  const shown = label === undefined ? undefined : unescape(label);
  const named = Object.hasOwn(names, target.slice(1)) ? names[target.slice(1)] : undefined;
  if (target.startsWith("@")) return mention(named ?? `@${shown ?? target.slice(1)}`, target.slice(1));
  if (target.startsWith("#")) return mention(named ?? `#${shown ?? target.slice(1)}`, target.slice(1));
  if (target.startsWith("!")) {
    // <!here>, <!channel>, <!everyone> (only when broadcasts are allowed), <!subteam^ID|@x>,
    // <!date^…|fallback>: shown as Slack shows them.
    const word = target.slice(1).split("^")[0];
    return mention(shown ?? `@${word}`);
  }
  const url = unescape(target);
  if (!SAFE_URL.test(url)) return `<${unescape(entity)}>`;
  return el("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, shown ?? url);
}

// A mention; an id's stays one hover away (its title).
function mention(text, id) {
  return el("span", { class: "mention", title: id && !text.endsWith(id) ? id : null }, text);
}

function splitOnce(text, separator) {
  const at = text.indexOf(separator);
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)];
}
