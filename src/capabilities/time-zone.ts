/** Time-zone arithmetic on top of `Intl` (IANA zones from the runtime's ICU data). */

/**
 * Formatters by zone. Building an `Intl.DateTimeFormat` loads the zone's ICU rules and costs far
 * more than formatting (it showed in turn benchmarks); zones are few, so they are kept.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
/** Bounds the cache against callers that send many distinct (valid) zone spellings. */
const MAX_CACHED_ZONES = 1_000;

/** The formatter of `zone`; throws RangeError for a zone `Intl` does not know. */
function formatterOf(zone: string): Intl.DateTimeFormat {
  let fmt = formatters.get(zone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      weekday: 'long',
      timeZoneName: 'longOffset',
    });
    if (formatters.size >= MAX_CACHED_ZONES) formatters.delete(formatters.keys().next().value!);
    formatters.set(zone, fmt);
  }
  return fmt;
}

/** True when `Intl` knows the zone, e.g. `Europe/Paris`, `UTC`. */
export function isValidTimeZone(zone: string): boolean {
  if (zone.trim() === '') return false;
  try {
    formatterOf(zone);
    return true;
  } catch {
    return false;
  }
}

/** A wall-clock reading of an instant in a zone. */
export interface ZonedTime {
  timezone: string;
  /** Local time with offset, e.g. `2026-04-01T14:03:05+02:00`. */
  iso: string;
  date: string;
  time: string;
  day_of_week: string;
  /** `+02:00`, `-05:30`, `+00:00`. */
  utc_offset: string;
}

/** Reads `instant` in `zone` (which must be valid). */
export function zonedTime(instant: Date, zone: string): ZonedTime {
  const p = partsOf(instant, zone);
  const date = `${p['year']}-${p['month']}-${p['day']}`;
  const time = `${p['hour']}:${p['minute']}:${p['second']}`;
  const offset = offsetText(p['timeZoneName'] ?? 'GMT');
  return { timezone: zone, iso: `${date}T${time}${offset}`, date, time, day_of_week: p['weekday'] ?? '', utc_offset: offset };
}

/** The zone's offset from UTC at `instant`, in minutes (east positive). */
export function zoneOffsetMinutes(instant: Date, zone: string): number {
  const p = partsOf(instant, zone);
  const asUtc = Date.UTC(+p['year']!, +p['month']! - 1, +p['day']!, +p['hour']!, +p['minute']!, +p['second']!);
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60000);
}

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?$/;
const OFFSET_RE = /(?:Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses an ISO 8601 date-time. With `Z` or an offset it is that instant; without, it is a
 * wall-clock time in `zone` (on a DST gap the later reading wins). Null when unparseable.
 */
export function parseDateTimeInZone(text: string, zone: string): Date | null {
  const trimmed = text.trim();
  if (OFFSET_RE.test(trimmed)) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(trimmed)) return null;
    const d = new Date(trimmed);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  const m = LOCAL_RE.exec(trimmed);
  if (!m) return null;
  const [y, mo, d, h, mi, s = '0', ms = '0'] = m.slice(1) as string[];
  const wall = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s, +ms.padEnd(3, '0'));
  const check = new Date(wall);
  if (check.getUTCMonth() !== +mo! - 1 || check.getUTCDate() !== +d! || +h! > 23) return null;
  // Two passes settle the offset around DST transitions.
  let guess = wall - zoneOffsetMinutes(new Date(wall), zone) * 60000;
  guess = wall - zoneOffsetMinutes(new Date(guess), zone) * 60000;
  return new Date(guess);
}

function partsOf(instant: Date, zone: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of formatterOf(zone).formatToParts(instant)) out[part.type] = part.value;
  return out;
}

/** `GMT+5:30` / `GMT-05:00` / `GMT` → `+05:30` / `-05:00` / `+00:00`. */
function offsetText(gmt: string): string {
  const m = /^GMT([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(gmt);
  if (!m) return '+00:00';
  return `${m[1]}${m[2]!.padStart(2, '0')}:${m[3] ?? '00'}`;
}
