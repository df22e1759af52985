import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  createKeyring,
  createSqlRotationSource,
  decryptSecret,
  encryptSecret,
  envelopeKeyId,
  rotateSecrets,
  type EncryptedRow,
  type RotationSource,
} from '../../src/crypto/index.js';
import { createLogger } from '../../src/log.js';
import { createStore } from '../../src/db/index.js';
import { keySpec } from './keys.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

const OLD = keySpec('old');
const NEW = keySpec('new');
const oldRing = createKeyring({ current: OLD });
const newRing = createKeyring({ current: NEW, previous: OLD });
const PURPOSE = 'test.secret';

function memorySource(rows: EncryptedRow[], opts: { conflictOn?: string } = {}): RotationSource & { rows: EncryptedRow[] } {
  return {
    name: 'memory',
    rows,
    async *readAll() {
      yield* rows.map((r) => ({ ...r }));
    },
    async write(row, newBlob) {
      const target = rows.find((r) => r.row_id === row.row_id);
      if (!target || target.blob !== row.blob || row.row_id === opts.conflictOn) return false;
      target.blob = newBlob;
      return true;
    },
  };
}

function sealed(ring: typeof oldRing, row_id: string, value = `v-${row_id}`): EncryptedRow {
  const aad = { org_id: 'org', row_id, purpose: PURPOSE };
  return { ...aad, blob: encryptSecret(ring, value, aad) };
}

describe('key rotation', () => {
  test('rotation - re-wraps old rows to the new kid, skips current ones, reports conflicts and failures', async () => {
    const tampered = sealed(oldRing, 'r4');
    tampered.org_id = 'other-org';
    const source = memorySource([sealed(oldRing, 'r1'), sealed(newRing, 'r2'), sealed(oldRing, 'r3'), tampered, sealed(oldRing, 'r5')], {
      conflictOn: 'r5',
    });
    const [report] = await rotateSecrets(newRing, [source]);
    assert.deepEqual(
      { ...report, failed: report!.failed },
      { source: 'memory', scanned: 5, rewrapped: 2, current: 1, conflicts: 1, failed: [{ row_id: 'r4', reason: 'authentication_failed' }] },
    );
    const onlyNew = createKeyring({ current: NEW });
    for (const id of ['r1', 'r2', 'r3']) {
      const row = source.rows.find((r) => r.row_id === id)!;
      assert.equal(envelopeKeyId(row.blob), 'new');
      assert.equal(decryptSecret(onlyNew, row.blob, row), `v-${id}`);
    }
  });

  test('rotation - dry run counts without writing', async () => {
    const source = memorySource([sealed(oldRing, 'r1')]);
    const before = source.rows[0]!.blob;
    const [report] = await rotateSecrets(newRing, [source], { dryRun: true });
    assert.equal(report!.rewrapped, 1);
    assert.equal(source.rows[0]!.blob, before);
  });

  test('rotation - the SQL source pages through a table and writes compare-and-set (PGlite)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ass-rot-'));
    await seedEmbeddedDataDir(dir);
    const store = await createStore({ dataDir: dir, log: createLogger('silent') });
    try {
      await store.sql('create table rot_test (id text primary key, organization_id text not null, secret_enc text)');
      for (let i = 0; i < 7; i++) {
        const row = sealed(oldRing, `id-${i}`);
        await store.sql('insert into rot_test (id, organization_id, secret_enc) values (?, ?, ?)', [row.row_id, row.org_id, row.blob]);
      }
      await store.sql('insert into rot_test (id, organization_id, secret_enc) values (?, ?, null)', ['id-null', 'org']);
      const source = createSqlRotationSource(store, {
        name: 'rot_test',
        table: 'rot_test',
        blobColumn: 'secret_enc',
        purpose: PURPOSE,
        pageSize: 3,
      });
      const [report] = await rotateSecrets(newRing, [source]);
      assert.equal(report!.scanned, 7);
      assert.equal(report!.rewrapped, 7);
      const rows = await store.sql<{ id: string; secret_enc: string }>(
        'select id, secret_enc from rot_test where secret_enc is not null order by id',
      );
      for (const r of rows)
        assert.equal(
          decryptSecret(createKeyring({ current: NEW }), r.secret_enc, { org_id: 'org', row_id: r.id, purpose: PURPOSE }),
          `v-${r.id}`,
        );
      assert.equal(await source.write({ row_id: 'id-0', org_id: 'org', purpose: PURPOSE, blob: 'stale' }, 'x'), false);
      assert.throws(() => createSqlRotationSource(store, { name: 'x', table: 'bad; drop', blobColumn: 'c', purpose: 'p' }), TypeError);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
