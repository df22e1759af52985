import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createKeyring, EMBEDDED_KEY_FILE, KeyFormatError, loadKeyring, loadOrCreateEmbeddedKey } from '../../src/crypto/index.js';
import { keySpec } from './keys.js';

describe('embedded key', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const d = await mkdtemp(join(tmpdir(), 'ass-key-'));
    dirs.push(d);
    return join(d, 'data');
  };
  after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  test('embedded key - first start creates a 0600 key file; later starts reuse it', async () => {
    const dataDir = await tempDir();
    const first = await loadOrCreateEmbeddedKey(dataDir);
    assert.equal(first.created, true);
    assert.equal(first.path, join(dataDir, EMBEDDED_KEY_FILE));
    assert.equal((await stat(first.path)).mode & 0o777, 0o600);
    assert.equal((await readFile(first.path, 'utf8')).trim(), first.spec);
    createKeyring({ current: first.spec });
    const second = await loadOrCreateEmbeddedKey(dataDir);
    assert.deepEqual({ ...second }, { ...first, created: false });
  });

  test('embedded key - concurrent first starts agree on one key', async () => {
    const dataDir = await tempDir();
    const results = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateEmbeddedKey(dataDir)));
    assert.equal(new Set(results.map((r) => r.spec)).size, 1);
    assert.equal(results.filter((r) => r.created).length, 1);
  });

  test('embedded key - a world-readable file is reset to 0600; a corrupt file is an error', async () => {
    const dataDir = await tempDir();
    const { path } = await loadOrCreateEmbeddedKey(dataDir);
    await chmod(path, 0o644);
    assert.equal((await loadOrCreateEmbeddedKey(dataDir)).permissionsFixed, true);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    await writeFile(path, 'garbage\n');
    await assert.rejects(loadOrCreateEmbeddedKey(dataDir), KeyFormatError);
  });

  test('loadKeyring - env key wins; distributed mode without it refuses; embedded falls back to the file', async () => {
    const dataDir = await tempDir();
    const current = keySpec('env1');
    const env = await loadKeyring({
      mode: 'distributed',
      DATA_DIR: dataDir,
      SECRETS_ENCRYPTION_KEY: current,
      SECRETS_ENCRYPTION_KEY_PREVIOUS: keySpec('env0'),
    });
    assert.equal(env.source, 'env');
    assert.deepEqual(env.keyring.kids, ['env1', 'env0']);
    await assert.rejects(loadKeyring({ mode: 'distributed', DATA_DIR: dataDir }), KeyFormatError);
    const embedded = await loadKeyring({ mode: 'embedded', DATA_DIR: dataDir });
    assert.equal(embedded.source, 'embedded');
    assert.equal(embedded.created, true);
    assert.match(embedded.keyring.current.kid, /^embedded-[0-9a-f]{8}$/);
  });
});
