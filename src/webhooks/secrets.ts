/**
 * Signing secrets and signatures per Standard Webhooks (https://www.standardwebhooks.com):
 * `whsec_<base64 key>`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`,
 * one `v1,` entry per secret in force (two during a rotation's overlap). Secrets are sealed at
 * rest with the service's key (src/crypto), bound to the organisation, the endpoint and the slot.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { decryptSecret, encryptSecret, type Keyring } from '../crypto/index.js';

export const SECRET_PURPOSE = 'webhook_endpoint.secret';
export const PREVIOUS_SECRET_PURPOSE = 'webhook_endpoint.previous_secret';
const SECRET_BYTES = 32;

export type SecretSlot = 'current' | 'previous';

export function newSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

const aad = (orgId: string, endpointId: string, slot: SecretSlot) => ({
  org_id: orgId,
  row_id: endpointId,
  purpose: slot === 'current' ? SECRET_PURPOSE : PREVIOUS_SECRET_PURPOSE,
});

export function sealSecret(keyring: Keyring, secret: string, orgId: string, endpointId: string, slot: SecretSlot): string {
  return encryptSecret(keyring, secret, aad(orgId, endpointId, slot));
}

export function openSecret(keyring: Keyring, sealed: string, orgId: string, endpointId: string, slot: SecretSlot): string {
  return decryptSecret(keyring, sealed, aad(orgId, endpointId, slot));
}

/** The three Standard Webhooks headers for one attempt, signed with every secret given (newest first). */
export function signedHeaders(msgId: string, at: Date, body: string, secrets: readonly string[]): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s).sign(msgId, at, body));
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
