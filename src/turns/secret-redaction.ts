/**
 * Secret values never reach the transcript: a tool result (or error text) that happens to
 * contain one of the session's secret values gets `[secret:NAME]` in its place before it is
 * recorded, streamed or sent to the LLM. Pure; the act step loads the values.
 */

export interface SecretValue {
  name: string;
  value: string;
}

/** Shorter values are not redacted: they would match ordinary text everywhere. */
export const MIN_REDACTED_SECRET_CHARS = 4;

/** The forms a value takes in tool output: as is, and escaped inside a JSON string. */
function forms(value: string): string[] {
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped === value ? [value] : [value, escaped];
}

/** The replacements to apply, longest first so a secret that contains another is replaced whole. */
export function redactionTable(secrets: readonly SecretValue[]): { needle: string; marker: string }[] {
  return secrets
    .filter((s) => s.value.length >= MIN_REDACTED_SECRET_CHARS)
    .flatMap((s) => forms(s.value).map((needle) => ({ needle, marker: `[secret:${s.name}]` })))
    .sort((a, b) => b.needle.length - a.needle.length);
}

/** `text` with every secret value replaced by its marker. */
export function redactSecrets(text: string, table: readonly { needle: string; marker: string }[]): string {
  let out = text;
  for (const { needle, marker } of table) if (out.includes(needle)) out = out.split(needle).join(marker);
  return out;
}
