import { aadBinding, decryptSecret, encryptSecret, type Keyring, type SecretAad } from '../../crypto/index.js';

/**
 * The AAD purpose of provider keys. `src/crypto/rotation-sources.ts` names the same string for
 * `npm run rotate-keys`; a test keeps the two equal.
 */
export const LLM_PROVIDER_KEY_PURPOSE = 'llm_provider.api_key';

/**
 * The provider columns a key is bound to, in `aadBinding` order; the rotation source binds by
 * the same columns (a test keeps the two equal).
 */
export const LLM_PROVIDER_KEY_BINDING_COLUMNS = ['provider_type', 'base_url'] as const;

/**
 * What a provider key is bound to: its organisation, its own row, and where it may be sent
 * (the provider type and base URL), so a key never opens for another host or vendor API.
 */
export interface ProviderKeyOwner {
  id: string;
  organization_id: string;
  provider_type: string;
  /** null or absent: the vendor's default URL. */
  base_url?: string | null;
}

function providerKeyAad(owner: ProviderKeyOwner): SecretAad {
  return {
    org_id: owner.organization_id,
    row_id: owner.id,
    purpose: LLM_PROVIDER_KEY_PURPOSE,
    binding: aadBinding([owner.provider_type, owner.base_url ?? null]),
  };
}

/** Seals a plain API key for one provider row and destination; the result is what `api_key_encrypted` stores. */
export function sealProviderKey(keyring: Keyring, owner: ProviderKeyOwner, apiKey: string): string {
  return encryptSecret(keyring, apiKey, providerKeyAad(owner));
}

/**
 * Opens a provider row's key. Throws `DecryptionError` when the value was sealed for another
 * row, organisation, provider type or base URL, tampered with, or sealed with a key the keyring
 * no longer holds.
 */
export function openProviderKey(keyring: Keyring, row: ProviderKeyOwner & { api_key_encrypted: string }): string {
  return decryptSecret(keyring, row.api_key_encrypted, providerKeyAad(row));
}

/**
 * Opens a key sealed before keys were bound to their destination (organisation, row and
 * purpose only). Used once per row by `upgradeLegacyProviderKeys`, never to build a client.
 */
export function openLegacyProviderKey(keyring: Keyring, row: ProviderKeyOwner & { api_key_encrypted: string }): string {
  return decryptSecret(keyring, row.api_key_encrypted, { org_id: row.organization_id, row_id: row.id, purpose: LLM_PROVIDER_KEY_PURPOSE });
}
