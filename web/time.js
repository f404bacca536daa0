// Instants and wall clocks in named timezones, through Intl only (no library, no build step).

export function viewerZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

// "4 Jan 2027, 10:00 CET" for an ISO instant, in `zone` (default: the viewer's).
export function formatInstant(utc, zone) {
  if (!utc) return "—";
  const options = { dateStyle: "medium", timeStyle: "short", timeZone: zone || viewerZone() };
  try {
    const date = new Intl.DateTimeFormat(undefined, options).format(new Date(utc));
    return `${date} ${zoneName(utc, options.timeZone)}`;
  } catch {
    // An unknown zone (a stored one that does not exist): the instant in UTC, still in words.
    return zone && zone !== "UTC" ? formatInstant(utc, "UTC") : utc;
  }
}

function zoneName(utc, timeZone) {
  const parts = new Intl.DateTimeFormat("en-GB", { timeZone, timeZoneName: "short" })
    .formatToParts(new Date(utc));
  return parts.find((part) => part.type === "timeZoneName")?.value ?? timeZone;
}

export function isZone(zone) {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

// Minutes `zone` is ahead of UTC at the instant `ms`.
function offsetMinutes(zone, ms) {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit",
  }).formatToParts(new Date(ms));
  const get = (type) => Number(parts.find((part) => part.type === type).value);
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"),
    get("second"));
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60000);
}

// A local wall clock "YYYY-MM-DDTHH:MM" in `zone` as ISO-8601 with that zone's offset. Like
// Python's zoneinfo with fold=0: a time that happens twice is the first one; a time skipped
// by a clock change keeps the offset from before it (02:30 becomes 03:30 summer time).
export function zonedIso(local, zone) {
  const [date, time = "00:00"] = local.split("T");
  const [y, mo, d] = date.split("-").map(Number);
  const [h, mi] = time.split(":").map(Number);
  const wall = Date.UTC(y, mo - 1, d, h, mi);
  const day = 24 * 3600 * 1000;
  const before = offsetMinutes(zone, wall - day);
  const after = offsetMinutes(zone, wall + day);
  const fits = [before, after].filter((o) => offsetMinutes(zone, wall - o * 60000) === o);
  const offset = fits.length ? Math.max(...fits) : before;
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date}T${pad(h)}:${pad(mi)}:00${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

// The wall clock "YYYY-MM-DDTHH:MM" of an ISO instant in `zone` (for a datetime-local field).
export function wallClock(utc, zone) {
  const ms = new Date(utc).getTime();
  return new Date(ms + offsetMinutes(zone, ms) * 60000).toISOString().slice(0, 16);
}
