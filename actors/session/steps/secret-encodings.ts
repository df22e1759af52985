/**
 * The shapes a secret takes when a server or a tool echoes it transformed: base64 (standard and
 * URL-safe, also inside a longer base64 text at any byte offset), hex, reversed, URL-encoded.
 * Case and separator characters are handled by the matcher (secret-redaction.ts), not here.
 */

/**
 * Base64 of `bytes` as it appears inside the base64 of a longer text: the characters determined by
 * `bytes` alone when they start `offset` (0, 1 or 2) bytes into a 3-byte group. Character i holds bits
 * [6i, 6i + 6) and the value's bits are [8 × offset, 8 × (offset + n)).
 */
export function base64Core(bytes: Buffer, offset: 0 | 1 | 2): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

const urlSafe = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_');

/** Transformed forms of `value`, each distinct from the value itself. */
export function encodedForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = new Set<string>();
  const full = bytes.toString('base64');
  forms.add(full);
  forms.add(urlSafe(full));
  for (const offset of [0, 1, 2] as const) {
    const core = base64Core(bytes, offset);
    forms.add(core);
    forms.add(urlSafe(core));
  }
  forms.add(bytes.toString('hex'));
  forms.add([...value].reverse().join(''));
  forms.add(encodeURIComponent(value));
  forms.delete(value);
  return [...forms];
}
