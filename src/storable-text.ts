/**
 * Text every store accepts: well-formed Unicode without NUL. PostgreSQL's `text` and `jsonb`
 * refuse NUL (`\u0000`), and a lone surrogate cannot be encoded as UTF-8 (jsonb refuses its
 * escape, a UTF-8 encoder turns it into U+FFFD behind the writer's back). Request input that
 * breaks this is refused with a 400 (http/input-hygiene.ts); what the service cannot refuse,
 * model output and tool results, is repaired with this before it becomes an event.
 */

/** ES2024's String.prototype.isWellFormed/toWellFormed (Node 20+), which the project's TypeScript lib predates. */
type WellFormedString = string & { isWellFormed(): boolean; toWellFormed(): string };

const REPLACEMENT = '\uFFFD';

/** True when `s` holds no NUL and no unpaired surrogate. */
export function isStorableText(s: string): boolean {
  return (s as WellFormedString).isWellFormed() && !s.includes('\0');
}

/** `s` with each NUL and each unpaired surrogate replaced by U+FFFD (the same string when already storable). */
export function storableText(s: string): string {
  if (isStorableText(s)) return s;
  return (s as WellFormedString).toWellFormed().replaceAll('\0', REPLACEMENT);
}

/**
 * A JSON-like value with every string (object keys included) made storable. Clean input is
 * returned as is, without a copy; only the objects and arrays on the way to a repaired string
 * are copied. Non-plain objects (Dates, Buffers) are left alone: JSON.stringify turns them into
 * text of their own.
 */
export function storableJson<T>(value: T): T {
  return repaired(value) as T;
}

function repaired(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const fixed = repaired(item);
      if (fixed !== item) (copy ??= value.slice())[i] = fixed;
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key];
    const fixed = repaired(item);
    const fixedKey = storableText(key);
    if (fixed === item && fixedKey === key) continue;
    copy ??= { ...value };
    if (fixedKey !== key) delete copy[key];
    copy[fixedKey] = fixed;
  }
  return copy ?? value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
