import type { Store } from '../store/index.js';
import type { RotationSource } from './rotation.js';

/**
 * Every encrypted column of the service, for `npm run rotate-keys`. A resource that stores
 * sealed values adds one `createSqlRotationSource(store, {name, table, blobColumn,
 * purpose})` here (import it from './sql-rotation-source.js'), with the same purpose
 * string it passes to `encryptSecret`.
 */
export function createRotationSources(store: Pick<Store, 'sql'>): RotationSource[] {
  void store;
  return [];
}
