// The recurrence picker: when a message (or a rotation) goes out, chosen the way people say
// it. Modes: once, daily, weekdays, weekly (chosen days), monthly (day N, the last day, the
// nth or last weekday of the start date), yearly, custom (a raw RFC 5545 rule for experts).
// ONE time field: it is written both as the rule's BYHOUR/BYMINUTE and as dtstart's time, so
// the two never disagree. A stored rule reads back into the same controls, or Custom when it
// does not fit them.
//
// mountRecurrence(container, opts) → controller
//   opts.prefix   id prefix of the controls (default "r"; ids `${prefix}-repeat`, `-date`,
//                 `-time`, `-day-MO`…, `-monthly`, `-rule`, `-words`)
//   opts.modes    the modes offered, a subset of MODES (default all). Rotations use
//                 ["daily", "weekdays", "weekly"] with opts.date false: weekdays and a time.
//   opts.date     show the date field (default true)
//   opts.onChange called after any edit of the controls
// controller.fields(zone)  the API's schedule fields: {send_at} (ISO with zone's offset) or
//                          {rrule, dtstart}; a field left empty is left out (the API's 422
//                          then names it, and showProblems puts it beside the control)
// controller.kind()        "once" or "repeat"
// controller.load({send_at, rrule, dtstart}, zone)  reads a stored schedule back
// controller.weekdays() / controller.time()  ["MO", …] and "HH:MM" (for rotations);
// controller.setWeekly(days, time)           the reverse (picks weekdays/daily/weekly)
// controller.showWords(text)  the schedule in words (POST /preview's schedule_text), or
//                             null/"" to clear it (an invalid draft never keeps old words)
import { isZone, wallClock, zonedIso } from "./time.js";
import { el, field, linkStyles } from "./ui.js";

export const MODES = ["once", "daily", "weekdays", "weekly", "monthly", "yearly", "custom"];
export const DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
const WORKDAYS = DAYS.slice(0, 5);
const DAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const LABELS = {
  once: "Once", daily: "Every day", weekdays: "Every weekday (Monday to Friday)",
  weekly: "Weekly, on chosen days", monthly: "Monthly", yearly: "Yearly",
  custom: "Custom rule (RRULE, for experts)",
};
const ORDINALS = ["first", "second", "third", "fourth", "fifth"];
// Rule parts the simple modes can say; anything else (COUNT, UNTIL, INTERVAL>1…) is Custom.
const SIMPLE_PARTS = new Set(["FREQ", "INTERVAL", "BYDAY", "BYMONTHDAY", "BYMONTH", "BYHOUR",
  "BYMINUTE", "BYSECOND"]);

export function mountRecurrence(container, opts = {}) {
  const p = opts.prefix ?? "r";
  const modes = MODES.filter((mode) => (opts.modes ?? MODES).includes(mode));
  linkStyles("compose.css");
  const ui = build(p, modes, opts.date !== false);
  container.append(ui.root);
  const mode = () => ui.mode.value;
  const changed = () => {
    sync();
    opts.onChange?.();
  };

  // Shows the controls of the chosen mode, and ties each API field name to its control.
  function sync() {
    const m = mode();
    ui.weekly.hidden = m !== "weekly";
    ui.monthlyField.hidden = m !== "monthly";
    ui.ruleField.hidden = m !== "custom";
    fillMonthly();
    ui.date.dataset.field = m === "once" ? "send_at" : "dtstart";
    ui.mode.dataset.field = m === "custom" ? "" : "rrule";
    ui.rule.dataset.field = m === "custom" ? "rrule" : "";
    const hint = document.getElementById(`${p}-date-hint`);
    if (hint) hint.textContent = dateHint(m);
  }

  // The monthly choices follow the date: "day 14", "the second Tuesday", "the last Tuesday".
  function fillMonthly() {
    const date = ui.date.value;
    const chosen = ui.monthly.value;
    const choices = date ? monthlyChoices(date) : [["", "Pick a start date first"]];
    ui.monthly.replaceChildren(...choices.map(([value, label]) => el("option", { value }, label)));
    if (choices.some(([value]) => value === chosen)) ui.monthly.value = chosen;
  }

  function rule() {
    const [h, mi] = ui.time.value.split(":").map(Number);
    const at = ui.time.value ? `;BYHOUR=${h};BYMINUTE=${mi}` : "";
    const date = ui.date.value;
    switch (mode()) {
      case "daily": return `FREQ=DAILY${at}`;
      case "weekdays": return `FREQ=WEEKLY;BYDAY=${WORKDAYS.join(",")}${at}`;
      // No day ticked: the start date's weekday (RFC 5545's default for a weekly rule).
      case "weekly": return `FREQ=WEEKLY${weekdays().length ? `;BYDAY=${weekdays().join(",")}` : ""}${at}`;
      case "monthly": return `FREQ=MONTHLY;${ui.monthly.value}${at}`;
      case "yearly": {
        const [, mo, d] = date.split("-").map(Number);
        return date ? `FREQ=YEARLY;BYMONTH=${mo};BYMONTHDAY=${d}${at}` : `FREQ=YEARLY${at}`;
      }
      default: return ui.rule.value.trim();
    }
  }

  function fields(zone) {
    const date = ui.date.value;
    const time = ui.time.value;
    const local = date && time ? `${date}T${time}` : "";
    if (mode() === "once") {
      // An unknown zone goes as if UTC: the API's 422 then names the timezone, not the time.
      if (!local) return {};
      return { send_at: isZone(zone) ? zonedIso(local, zone) : `${local}:00Z` };
    }
    const out = {};
    if (rule()) out.rrule = rule();
    if (local) out.dtstart = local;
    return out;
  }

  function weekdays() {
    return DAYS.filter((day) => ui.days[day].checked);
  }

  function load({ send_at: sendAt, rrule, dtstart }, zone) {
    if (!rrule) {
      const local = sendAt ? (isZone(zone) ? wallClock(sendAt, zone) : sendAt.slice(0, 16)) : "";
      setDateTime(local);
      choose("once");
      return;
    }
    setDateTime(dtstart ?? "");
    ui.rule.value = rrule;
    const fit = fitRule(rrule, ui.date.value, ui.time.value);
    if (!fit || !modes.includes(fit.mode)) return choose("custom");
    for (const day of DAYS) ui.days[day].checked = (fit.days ?? []).includes(day);
    choose(fit.mode);
    if (fit.monthly) ui.monthly.value = fit.monthly;
  }

  function setDateTime(local) {
    const [date = "", time = ""] = local.split("T");
    ui.date.value = date;
    ui.time.value = time.slice(0, 5);
  }

  function choose(m) {
    ui.mode.value = modes.includes(m) ? m : modes[0];
    sync();
  }

  // Rotations: weekdays and a send time, shown as the matching mode.
  function setWeekly(days, time) {
    ui.time.value = time ?? "";
    for (const day of DAYS) ui.days[day].checked = days.includes(day);
    if (days.length === 7 && modes.includes("daily")) choose("daily");
    else if (same(days, WORKDAYS) && modes.includes("weekdays")) choose("weekdays");
    else choose("weekly");
  }

  function currentWeekdays() {
    if (mode() === "daily") return [...DAYS];
    if (mode() === "weekdays") return [...WORKDAYS];
    return weekdays();
  }

  function showWords(text) {
    ui.words.textContent = text ? text : "";
    ui.words.hidden = !text;
  }

  ui.root.addEventListener("input", changed);
  ui.root.addEventListener("change", changed);
  // The weekday ticked by default on Weekly is the start date's, whichever is chosen first.
  const tickStartDay = () => {
    if (mode() === "weekly" && !weekdays().length && ui.date.value) {
      ui.days[DAYS[weekdayIndex(ui.date.value)]].checked = true;
    }
  };
  ui.mode.addEventListener("change", tickStartDay);
  ui.date.addEventListener("change", tickStartDay);
  choose(modes[0]);
  showWords(null);
  return {
    root: ui.root, fields, load, setWeekly, showWords,
    kind: () => (mode() === "once" ? "once" : "repeat"),
    weekdays: currentWeekdays, time: () => ui.time.value,
    setDate: (date) => { ui.date.value = date; sync(); },
  };
}

// Which simple mode a stored rule is, with its details; null when only Custom can say it.
export function fitRule(rrule, date, time) {
  const parts = parseRule(rrule);
  if (!parts || [...Object.keys(parts)].some((key) => !SIMPLE_PARTS.has(key))) return null;
  if ((parts.INTERVAL ?? "1") !== "1" || (parts.BYSECOND ?? "0") !== "0") return null;
  if (!timeFits(parts, time)) return null;
  const { FREQ: freq, BYDAY: byday, BYMONTHDAY: monthday, BYMONTH: month } = parts;
  const days = byday ? byday.split(",") : [];
  const plainDays = days.every((day) => DAYS.includes(day));
  if (freq === "DAILY" && !byday && !monthday && !month) return { mode: "daily" };
  if (freq === "WEEKLY" && !monthday && !month && plainDays) {
    if (!byday) return date ? { mode: "weekly", days: [DAYS[weekdayIndex(date)]] } : null;
    if (same(days, WORKDAYS)) return { mode: "weekdays", days };
    return { mode: "weekly", days };
  }
  if (freq === "MONTHLY" && !month && date) {
    const choice = byday ? `BYDAY=${byday.replace(/^\+/, "")}` : `BYMONTHDAY=${monthday}`;
    const fits = (byday ? !monthday : monthday) && monthlyChoices(date).some(([v]) => v === choice);
    return fits ? { mode: "monthly", monthly: choice } : null;
  }
  if (freq === "YEARLY" && !byday && date) {
    const [, mo, d] = date.split("-").map(Number);
    if (!month && !monthday) return { mode: "yearly" };
    if (Number(month) === mo && Number(monthday) === d) return { mode: "yearly" };
  }
  return null;
}

// "FREQ=WEEKLY;BYDAY=MO" → {FREQ: "WEEKLY", BYDAY: "MO"}; an optional "RRULE:" prefix.
export function parseRule(rrule) {
  const parts = {};
  for (const part of rrule.trim().replace(/^RRULE:/i, "").split(";")) {
    if (!part) continue;
    const [key, value] = part.split("=");
    if (!key || value === undefined) return null;
    parts[key.toUpperCase()] = value.toUpperCase();
  }
  return parts.FREQ ? parts : null;
}

function timeFits(parts, time) {
  if (parts.BYHOUR === undefined && parts.BYMINUTE === undefined) return true;
  if (!time) return false;
  const [h, mi] = time.split(":").map(Number);
  return Number(parts.BYHOUR ?? h) === h && Number(parts.BYMINUTE ?? mi) === mi &&
    /^\d+$/.test(parts.BYHOUR ?? "0") && /^\d+$/.test(parts.BYMINUTE ?? "0");
}

// The monthly rules a start date suggests, as [rule part, words].
export function monthlyChoices(date) {
  const [y, mo, d] = date.split("-").map(Number);
  const dayName = DAY_NAMES[weekdayIndex(date)];
  const code = DAYS[weekdayIndex(date)];
  const length = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  const nth = Math.ceil(d / 7);
  const choices = [[`BYMONTHDAY=${d}`, `On day ${d}`]];
  if (d === length) choices.push(["BYMONTHDAY=-1", "On the last day"]);
  if (nth <= 4) choices.push([`BYDAY=${nth}${code}`, `On the ${ORDINALS[nth - 1]} ${dayName}`]);
  if (d + 7 > length) choices.push([`BYDAY=-1${code}`, `On the last ${dayName}`]);
  return choices;
}

// Monday = 0 for a "YYYY-MM-DD".
function weekdayIndex(date) {
  const [y, mo, d] = date.split("-").map(Number);
  return (new Date(Date.UTC(y, mo - 1, d)).getUTCDay() + 6) % 7;
}

function same(a, b) {
  return a.length === b.length && a.every((item) => b.includes(item));
}

// The browser's own date field takes the date in the order it shows (its interface language
// decides, which the page cannot read), so the hint names no format it might get wrong.
function dateHint(mode) {
  const how = "pick it from the calendar, or type it in the order the field shows";
  if (mode === "once") return `The day it is sent, in the timezone above: ${how}`;
  return `The series starts on or after this day: ${how}`;
}

function build(p, modes, withDate) {
  const mode = el("select", { id: `${p}-repeat`, name: `${p}_repeat` },
    modes.map((m) => el("option", { value: m }, LABELS[m])));
  const date = el("input", { id: `${p}-date`, name: `${p}_date`, type: "date" });
  const time = el("input", { id: `${p}-time`, name: `${p}_time`, type: "time" });
  const days = {};
  const boxes = DAYS.map((day, i) => {
    days[day] = el("input", { type: "checkbox", id: `${p}-day-${day}`, name: `${p}_day`, value: day });
    return el("span", { class: "choice" }, days[day],
      el("label", { for: `${p}-day-${day}` }, DAY_NAMES[i]));
  });
  const weekly = el("fieldset", { class: "days" }, el("legend", {}, "On these days"), boxes);
  const monthly = el("select", { id: `${p}-monthly`, name: `${p}_monthly` });
  const rule = el("textarea", { id: `${p}-rule`, name: `${p}_rule`, rows: "2", spellcheck: "false" });
  const monthlyField = field("Monthly on", monthly);
  const ruleField = field("Rule (RRULE)", rule,
    "RFC 5545, e.g. FREQ=MONTHLY;BYDAY=-1FR (COUNT and UNTIL work too); the time and start come from the fields above");
  const words = el("p", { id: `${p}-words`, class: "words", role: "status", "aria-live": "polite" });
  const dateField = field("Date", date, dateHint(modes[0]));
  dateField.hidden = !withDate;
  const root = el("div", { class: "recurrence" },
    field("Repeat", mode),
    el("div", { class: "when-row" }, dateField,
      field("Time", time, "Hours and minutes, in the timezone above")),
    weekly, monthlyField, ruleField, words);
  return { root, mode, date, time, days, weekly, monthly, monthlyField, rule, ruleField, words };
}
