import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createKeyring,
  decryptSecret,
  DecryptionError,
  encryptSecret,
  KeyFormatError,
  parseEnvelope,
  rewrap,
  type SecretAad,
} from '../../src/crypto/index.js';
import { keySpec } from './keys.js';

const AAD: SecretAad = { org_id: 'org-1', row_id: 'row-1', purpose: 'llm_provider.api_key' };
const k1 = keySpec('k1');
const k2 = keySpec('k2');

function isFailure(reason: string) {
  return (err: unknown) => err instanceof DecryptionError && err.reason === reason;
}

function tamper(blob: string, field: 'ct' | 'tag' | 'wrapped_dek' | 'iv'): string {
  const e = parseEnvelope(blob);
  const bytes = Buffer.from(e[field], 'base64');
  bytes[bytes.length - 1]! ^= 0x01;
  return JSON.stringify({ ...e, [field]: bytes.toString('base64') });
}

describe('envelope encryption', () => {
  const ring = createKeyring({ current: k1 });

  test('envelope - round trip, self-describing, a fresh data key and iv per value', () => {
    for (const plaintext of ['sk-live-123', '', 'ünïcødé ✓ 🔑', 'x'.repeat(100_000)]) {
      const blob = encryptSecret(ring, plaintext, AAD);
      assert.equal(decryptSecret(ring, blob, AAD), plaintext);
    }
    const a = parseEnvelope(encryptSecret(ring, 'same', AAD));
    const b = parseEnvelope(encryptSecret(ring, 'same', AAD));
    assert.equal(a.v, 1);
    assert.equal(a.kid, 'k1');
    assert.notEqual(a.wrapped_dek, b.wrapped_dek);
    assert.notEqual(a.iv, b.iv);
    assert.notEqual(a.ct, b.ct);
    assert.doesNotMatch(JSON.stringify(a), /same/);
  });

  test('envelope - tampering with ct, tag, iv or wrapped key fails authentication', () => {
    const blob = encryptSecret(ring, 'secret', AAD);
    for (const field of ['ct', 'tag', 'iv', 'wrapped_dek'] as const) {
      assert.throws(() => decryptSecret(ring, tamper(blob, field), AAD), isFailure('authentication_failed'), field);
    }
    assert.throws(() => decryptSecret(ring, 'not json', AAD), isFailure('malformed'));
    assert.throws(() => decryptSecret(ring, JSON.stringify({ ...parseEnvelope(blob), v: 2 }), AAD), isFailure('malformed'));
    assert.throws(() => decryptSecret(ring, JSON.stringify({ ...parseEnvelope(blob), tag: 'AAAA' }), AAD), isFailure('malformed'));
  });

  test('envelope - a value copied to another row, org or purpose does not open', () => {
    const blob = encryptSecret(ring, 'secret', AAD);
    for (const other of [
      { ...AAD, row_id: 'row-2' },
      { ...AAD, org_id: 'org-2' },
      { ...AAD, purpose: 'session_secret.value' },
    ]) {
      assert.throws(() => decryptSecret(ring, blob, other), isFailure('authentication_failed'));
    }
    assert.throws(() => encryptSecret(ring, 'x', { ...AAD, row_id: '' }), TypeError);
  });

  test('envelope - previous keys still decrypt; unknown key ids are reported', () => {
    const old = encryptSecret(createKeyring({ current: k1 }), 'old secret', AAD);
    const rotated = createKeyring({ current: k2, previous: k1 });
    assert.equal(decryptSecret(rotated, old, AAD), 'old secret');
    assert.equal(parseEnvelope(encryptSecret(rotated, 'new', AAD)).kid, 'k2');
    assert.throws(() => decryptSecret(createKeyring({ current: k2 }), old, AAD), isFailure('unknown_key'));
  });

  test('envelope - rewrap moves the data key to the current kid and keeps the ciphertext', () => {
    const old = encryptSecret(createKeyring({ current: k1 }), 'rotate me', AAD);
    const rotated = createKeyring({ current: k2, previous: [k1] });
    const next = rewrap(rotated, old, AAD);
    const [before, after] = [parseEnvelope(old), parseEnvelope(next)];
    assert.equal(after.kid, 'k2');
    assert.equal(after.ct, before.ct);
    assert.notEqual(after.wrapped_dek, before.wrapped_dek);
    assert.equal(decryptSecret(createKeyring({ current: k2 }), next, AAD), 'rotate me');
    assert.equal(rewrap(rotated, next, AAD), next, 'already current: unchanged');
    assert.throws(() => rewrap(rotated, old, { ...AAD, row_id: 'row-9' }), isFailure('authentication_failed'));
  });

  test('envelope - relabelling the kid of a wrapped key fails', () => {
    const both = createKeyring({ current: k2, previous: k1 });
    const blob = encryptSecret(createKeyring({ current: k1 }), 'x', AAD);
    assert.throws(
      () => decryptSecret(both, JSON.stringify({ ...parseEnvelope(blob), kid: 'k2' }), AAD),
      isFailure('authentication_failed'),
    );
  });

  test('keyring - rejects malformed specs without echoing key material', () => {
    const short = `k:${Buffer.alloc(16, 7).toString('base64')}`;
    for (const bad of ['nokid', 'k:', 'bad kid:AAAA', short]) {
      assert.throws(
        () => createKeyring({ current: bad }),
        (err: unknown) => err instanceof KeyFormatError && !err.message.includes(bad.split(':')[1] || '\u0000'),
      );
    }
    assert.throws(() => createKeyring({ current: keySpec('same'), previous: keySpec('same') }), KeyFormatError);
    assert.deepEqual(createKeyring({ current: k2, previous: [k1] }).kids, ['k2', 'k1']);
  });
});
