const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as UTF-8 text, or null when they look binary (invalid UTF-8 or a NUL byte). */
export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Occurrences of `needle` in `text`, not overlapping. `needle` must not be empty. */
export function countOccurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** `text` cut to `max` characters with an ellipsis marker when longer. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}
