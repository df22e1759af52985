import { KeyFormatError } from './crypto-errors.js';

/** Key ids: what `SECRETS_ENCRYPTION_KEY` allows before the colon. */
const KEY_SPEC = /^([A-Za-z0-9_.-]{1,64}):([A-Za-z0-9+/]+={0,2})$/;
export const KEY_BYTES = 32;

export interface KeyEncryptionKey {
  readonly kid: string;
  /** 32 bytes, AES-256. */
  readonly key: Buffer;
}

export interface Keyring {
  /** New values are sealed with this key; `rewrap` moves old values to it. */
  readonly current: KeyEncryptionKey;
  /** Looks up any key of the ring (current or previous) by id. */
  get(kid: string): KeyEncryptionKey | undefined;
  readonly kids: readonly string[];
}

export interface KeyringOptions {
  /** `<key_id>:<base64 of 32 random bytes>` */
  current: string;
  /** Earlier keys, still accepted for decryption during a rotation. */
  previous?: string | readonly string[];
}

/** Parses `<key_id>:<base64 32 bytes>`; the error never echoes the key material. */
export function parseKeySpec(spec: string, label = 'key'): KeyEncryptionKey {
  const match = KEY_SPEC.exec(spec.trim());
  if (!match) throw new KeyFormatError(`${label} must look like <key_id>:<base64 of ${KEY_BYTES} bytes>`);
  const key = Buffer.from(match[2]!, 'base64');
  if (key.length !== KEY_BYTES) throw new KeyFormatError(`${label} must decode to exactly ${KEY_BYTES} bytes`);
  return Object.freeze({ kid: match[1]!, key });
}

/** Builds the key-encryption keyring: one current key plus any previous ones. */
export function createKeyring({ current, previous = [] }: KeyringOptions): Keyring {
  const cur = parseKeySpec(current, 'current key');
  const prev = (typeof previous === 'string' ? [previous] : previous).map((p) => parseKeySpec(p, 'previous key'));
  const byKid = new Map<string, KeyEncryptionKey>();
  for (const k of [cur, ...prev]) {
    const existing = byKid.get(k.kid);
    if (existing && !existing.key.equals(k.key)) throw new KeyFormatError(`key id ${k.kid} is used for two different keys`);
    byKid.set(k.kid, k);
  }
  return Object.freeze({ current: cur, get: (kid: string) => byKid.get(kid), kids: Object.freeze([...byKid.keys()]) });
}
