import { randomBytes } from 'node:crypto';

/** A fresh `<kid>:<base64 32 bytes>` key spec for tests. */
export function keySpec(kid: string): string {
  return `${kid}:${randomBytes(32).toString('base64')}`;
}
