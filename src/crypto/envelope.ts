import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptionError } from './crypto-errors.js';
import type { KeyEncryptionKey, Keyring } from './keyring.js';

/**
 * AES-256-GCM envelope encryption. Every value gets a random 32-byte data key (DEK); the
 * DEK is sealed by the keyring's current key (KEK). Associated data binds both layers to
 * the value's organization, row and purpose, so a ciphertext copied to another row, org
 * or column fails to open. Rotation re-wraps only the DEK; the data ciphertext is unchanged.
 */

export const ENVELOPE_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const DEK_BYTES = 32;

/** What a sealed value belongs to; all three must match on decryption. */
export interface SecretAad {
  org_id: string;
  row_id: string;
  /** The column or use, e.g. `llm_provider.api_key`, `session_secret.value`. */
  purpose: string;
  /**
   * Further values the secret may only be used with (e.g. a provider key's type and base
   * URL, see `aadBinding`); absent = none, which is also how every value sealed before this
   * field existed was bound.
   */
  binding?: string;
}

/** The `binding` of values that must stay what they were when the secret was sealed. */
export function aadBinding(values: readonly (string | null)[]): string {
  return JSON.stringify(values);
}

/** The stored form, serialised as JSON. Binary fields are base64. */
export interface Envelope {
  v: 1;
  kid: string;
  /** iv (12) ‖ sealed DEK (32) ‖ tag (16) under the KEK `kid`. */
  wrapped_dek: string;
  iv: string;
  tag: string;
  ct: string;
}

function associatedData(layer: 'dek' | 'data', aad: SecretAad, kid?: string): Buffer {
  for (const field of ['org_id', 'row_id', 'purpose'] as const) {
    if (typeof aad[field] !== 'string' || aad[field] === '') throw new TypeError(`secret AAD ${field} must be a non-empty string`);
  }
  const parts = layer === 'dek' ? [kid, aad.org_id, aad.row_id, aad.purpose] : [aad.org_id, aad.row_id, aad.purpose];
  // Appended only when set, so values sealed without a binding open exactly as before.
  if (aad.binding !== undefined) parts.push(aad.binding);
  return Buffer.from(JSON.stringify(['ass-envelope', ENVELOPE_VERSION, layer, ...parts]), 'utf8');
}

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): { iv: Buffer; ct: Buffer; tag: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ct, tag: cipher.getAuthTag() };
}

function open(key: Buffer, iv: Buffer, ct: Buffer, tag: Buffer, aad: Buffer): Buffer {
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new DecryptionError('malformed');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]);
  } catch {
    throw new DecryptionError('authentication_failed');
  }
}

function wrapDek(kek: KeyEncryptionKey, dek: Buffer, aad: SecretAad): string {
  const { iv, ct, tag } = seal(kek.key, dek, associatedData('dek', aad, kek.kid));
  return Buffer.concat([iv, ct, tag]).toString('base64');
}

function unwrapDek(kek: KeyEncryptionKey, wrapped: string, aad: SecretAad): Buffer {
  const raw = Buffer.from(wrapped, 'base64');
  if (raw.length !== IV_BYTES + DEK_BYTES + TAG_BYTES) throw new DecryptionError('malformed');
  const dek = open(
    kek.key,
    raw.subarray(0, IV_BYTES),
    raw.subarray(IV_BYTES, IV_BYTES + DEK_BYTES),
    raw.subarray(IV_BYTES + DEK_BYTES),
    associatedData('dek', aad, kek.kid),
  );
  return dek;
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Parses a stored envelope; throws DecryptionError('malformed') on anything else. */
export function parseEnvelope(blob: string): Envelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(blob);
  } catch {
    throw new DecryptionError('malformed');
  }
  const e = parsed as Partial<Envelope> | null;
  const fields = [e?.wrapped_dek, e?.iv, e?.tag, e?.ct];
  if (!e || e.v !== ENVELOPE_VERSION || typeof e.kid !== 'string' || !fields.every((f) => typeof f === 'string' && B64.test(f))) {
    throw new DecryptionError('malformed');
  }
  return e as Envelope;
}

/** The id of the key that seals `blob` (for rotation scans). */
export function envelopeKeyId(blob: string): string {
  return parseEnvelope(blob).kid;
}

/** Seals `plaintext` for (org, row, purpose) under the current key; returns the stored string. */
export function encryptSecret(keyring: Keyring, plaintext: string, aad: SecretAad): string {
  const dek = randomBytes(DEK_BYTES);
  try {
    const { iv, ct, tag } = seal(dek, Buffer.from(plaintext, 'utf8'), associatedData('data', aad));
    const envelope: Envelope = {
      v: ENVELOPE_VERSION,
      kid: keyring.current.kid,
      wrapped_dek: wrapDek(keyring.current, dek, aad),
      iv: iv.toString('base64'),
      tag: tag.toString('base64'),
      ct: ct.toString('base64'),
    };
    return JSON.stringify(envelope);
  } finally {
    dek.fill(0);
  }
}

function kekFor(keyring: Keyring, envelope: Envelope): KeyEncryptionKey {
  const kek = keyring.get(envelope.kid);
  if (!kek) throw new DecryptionError('unknown_key');
  return kek;
}

/** Opens a sealed value; throws DecryptionError when it is malformed, foreign or tampered. */
export function decryptSecret(keyring: Keyring, blob: string, aad: SecretAad): string {
  const envelope = parseEnvelope(blob);
  const dek = unwrapDek(kekFor(keyring, envelope), envelope.wrapped_dek, aad);
  try {
    const b = (s: string) => Buffer.from(s, 'base64');
    return open(dek, b(envelope.iv), b(envelope.ct), b(envelope.tag), associatedData('data', aad)).toString('utf8');
  } finally {
    dek.fill(0);
  }
}

/**
 * Re-wraps the value's DEK with the current key (data ciphertext unchanged). Returns
 * `blob` itself when it already uses the current key.
 */
export function rewrap(keyring: Keyring, blob: string, aad: SecretAad): string {
  const envelope = parseEnvelope(blob);
  if (envelope.kid === keyring.current.kid) return blob;
  const dek = unwrapDek(kekFor(keyring, envelope), envelope.wrapped_dek, aad);
  try {
    return JSON.stringify({ ...envelope, kid: keyring.current.kid, wrapped_dek: wrapDek(keyring.current, dek, aad) } satisfies Envelope);
  } finally {
    dek.fill(0);
  }
}
