import { decryptSecret, encryptSecret, type Keyring } from '../../crypto/index.js';

/**
 * The AAD purpose of provider keys. `src/crypto/rotation-sources.ts` names the same string for
 * `npm run rotate-keys`; a test keeps the two equal.
 */
export const LLM_PROVIDER_KEY_PURPOSE = 'llm_provider.api_key';

/** What a provider key is bound to: its organisation and its own row. */
export interface ProviderKeyOwner {
  id: string;
  organization_id: string;
}

/** Seals a plain API key for one provider row; the result is what `api_key_encrypted` stores. */
export function sealProviderKey(keyring: Keyring, owner: ProviderKeyOwner, apiKey: string): string {
  return encryptSecret(keyring, apiKey, { org_id: owner.organization_id, row_id: owner.id, purpose: LLM_PROVIDER_KEY_PURPOSE });
}

/**
 * Opens a provider row's key. Throws `DecryptionError` when the value was sealed for another
 * row or organisation, tampered with, or sealed with a key the keyring no longer holds.
 */
export function openProviderKey(keyring: Keyring, row: ProviderKeyOwner & { api_key_encrypted: string }): string {
  return decryptSecret(keyring, row.api_key_encrypted, { org_id: row.organization_id, row_id: row.id, purpose: LLM_PROVIDER_KEY_PURPOSE });
}
