import type { Keyring } from '../../crypto/index.js';
import type { Logger } from '../../log.js';
import type { Store } from '../../db/index.js';
import { openLegacyProviderKey, openProviderKey, sealProviderKey, type ProviderKeyOwner } from './provider-key.js';

type SealedRow = ProviderKeyOwner & { api_key_encrypted: string };

/**
 * At start: provider keys sealed before keys were bound to their destination (type and base
 * URL) are opened with the old associated data once and sealed again bound to the row's
 * current destination, by compare-and-set (instances starting together do not clash). After
 * that no code path opens a key without the binding. A row that opens neither way (another
 * keyring, tampering) is left as it is: using it fails as before.
 */
export async function upgradeLegacyProviderKeys({
  store,
  keyring,
  log,
}: {
  store: Pick<Store, 'sql'>;
  keyring: Keyring;
  log: Logger;
}): Promise<number> {
  const rows = await store.sql<SealedRow>(
    'select id::text as id, organization_id::text as organization_id, provider_type, base_url, api_key_encrypted from llm_providers where api_key_encrypted is not null',
  );
  let upgraded = 0;
  for (const row of rows) {
    const plain = legacyKeyOf(keyring, row);
    if (plain === null) continue;
    const sealed = sealProviderKey(keyring, row, plain);
    const done = await store.sql('update llm_providers set api_key_encrypted = ? where id = ? and api_key_encrypted = ? returning id', [
      sealed,
      row.id,
      row.api_key_encrypted,
    ]);
    upgraded += done.length;
  }
  if (upgraded > 0) log.info({ upgraded }, 'llm provider keys bound to their provider type and base URL');
  return upgraded;
}

/** The plain key when the row holds a legacy (unbound) envelope; null when it is bound already or opens neither way. */
function legacyKeyOf(keyring: Keyring, row: SealedRow): string | null {
  try {
    openProviderKey(keyring, row);
    return null;
  } catch {
    try {
      return openLegacyProviderKey(keyring, row);
    } catch {
      return null;
    }
  }
}
