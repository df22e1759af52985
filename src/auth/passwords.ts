import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { PasswordHashQueue } from './password-hash-queue.js';

/** scrypt cost parameters; stored with every hash so they can be raised later. */
export interface PasswordHashOptions {
  /** CPU/memory cost, a power of two (default 2^15: about 32 MiB and ~90 ms per hash). */
  N: number;
  r: number;
  p: number;
  /** Salt length in bytes (default 16). */
  saltBytes: number;
  /** Derived key length in bytes (default 32). */
  keyBytes: number;
}

export function defaultPasswordHashOptions(): PasswordHashOptions {
  return { N: 2 ** 15, r: 8, p: 1, saltBytes: 16, keyBytes: 32 };
}

/** `scrypt$N$r$p$<salt b64url>$<key b64url>` */
const HASH_RE = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

function derive(password: string, salt: Buffer, keyBytes: number, { N, r, p }: { N: number; r: number; p: number }): Promise<Buffer> {
  // Node's default maxmem (32 MiB) is exactly 128*N*r at N=2^15; leave headroom.
  const opts: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, keyBytes, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

function parse(hash: string): ParsedHash | null {
  const m = HASH_RE.exec(hash);
  if (!m) return null;
  return { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]), salt: Buffer.from(m[4]!, 'base64url'), key: Buffer.from(m[5]!, 'base64url') };
}

/**
 * scrypt password hashing (node:crypto). `verify` always runs one scrypt, also for a missing
 * user or an unusable stored hash (a dummy hash is used), so both failures take the same time.
 * With a `queue`, every scrypt waits for one of its slots (a full line: TooManyRequestsError).
 */
export async function createPasswordHasher(opts: Partial<PasswordHashOptions> = {}, { queue }: { queue?: PasswordHashQueue } = {}) {
  const o = { ...defaultPasswordHashOptions(), ...opts };
  const run = queue ? queue.run : <T>(fn: () => Promise<T>) => fn();

  async function hash(password: string): Promise<string> {
    const salt = randomBytes(o.saltBytes);
    const key = await run(() => derive(password, salt, o.keyBytes, o));
    return `scrypt$${o.N}$${o.r}$${o.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
  }

  // The stand-in for a missing or unusable hash needs the current parameters and the lengths of
  // a real one, not a real key: verify derives once either way and the comparison fails. Random
  // bytes cost no scrypt at start (~0.1 s idle, 0.6 s on a loaded host; issue 13 item 7).
  const dummy: ParsedHash = { N: o.N, r: o.r, p: o.p, salt: randomBytes(o.saltBytes), key: randomBytes(o.keyBytes) };

  /** True only when `stored` is a valid hash of `password`; null/garbage still costs one scrypt. */
  async function verify(stored: string | null | undefined, password: string): Promise<boolean> {
    const parsed = stored ? parse(stored) : null;
    const target = parsed ?? dummy;
    const key = await run(() => derive(password, target.salt, target.key.length, target));
    return parsed !== null && key.length === target.key.length && timingSafeEqual(key, target.key);
  }

  /** True when `stored` was made with other parameters than the current ones (rehash on login). */
  function needsRehash(stored: string): boolean {
    const parsed = parse(stored);
    return !parsed || parsed.N !== o.N || parsed.r !== o.r || parsed.p !== o.p || parsed.key.length !== o.keyBytes;
  }

  return { hash, verify, needsRehash };
}

export type PasswordHasher = Awaited<ReturnType<typeof createPasswordHasher>>;
