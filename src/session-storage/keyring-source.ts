import type { Keyring } from '../crypto/index.js';

/** A keyring, or a loader for it. */
export type KeyringInput = Keyring | (() => Promise<Keyring>);
/** Resolves the keyring when a secret is sealed or opened. */
export type KeyringSource = () => Promise<Keyring>;

/**
 * Normalises a keyring input: a loader runs once, on first use, and its result (or its failure,
 * e.g. no SECRETS_ENCRYPTION_KEY in distributed mode) is kept; storage without secrets never needs it.
 */
export function keyringSource(input: KeyringInput): KeyringSource {
  if (typeof input !== 'function') return async () => input;
  let loading: Promise<Keyring> | undefined;
  return () => (loading ??= input());
}
