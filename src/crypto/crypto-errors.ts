/**
 * Errors of the envelope-encryption module. Messages never contain key material,
 * plaintext or ciphertext.
 */

/** A key specification (`<key_id>:<base64 32 bytes>`) or key file is invalid. */
export class KeyFormatError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KeyFormatError';
  }
}

export type DecryptionFailure = 'malformed' | 'unknown_key' | 'authentication_failed';

/**
 * A sealed value could not be opened: not an envelope, sealed with a key the keyring does
 * not hold, or tampered with / bound to another org, row or purpose.
 */
export class DecryptionError extends Error {
  readonly reason: DecryptionFailure;
  constructor(reason: DecryptionFailure, options?: ErrorOptions) {
    super(
      reason === 'malformed'
        ? 'Encrypted value is malformed'
        : reason === 'unknown_key'
          ? 'Encrypted value uses an unknown key id'
          : 'Encrypted value failed authentication',
      options,
    );
    this.name = 'DecryptionError';
    this.reason = reason;
  }
}
