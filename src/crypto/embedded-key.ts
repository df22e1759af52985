import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { KeyFormatError } from './crypto-errors.js';
import { KEY_BYTES, parseKeySpec } from './keyring.js';

/** File under DATA_DIR holding the embedded mode's key-encryption key. */
export const EMBEDDED_KEY_FILE = 'secrets-encryption.key';
const FILE_MODE = 0o600;

export interface EmbeddedKey {
  /** `<key_id>:<base64 32 bytes>`, ready for `createKeyring({current})`. */
  spec: string;
  /** True when this call generated the key (the caller logs it once). */
  created: boolean;
  path: string;
  /** True when an existing file was readable by others and was reset to 0600. */
  permissionsFixed: boolean;
}

function newSpec(): string {
  return `embedded-${randomBytes(4).toString('hex')}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

async function readExisting(path: string): Promise<Omit<EmbeddedKey, 'created'>> {
  const spec = (await readFile(path, 'utf8')).trim();
  try {
    parseKeySpec(spec, 'embedded key file');
  } catch (err) {
    throw new KeyFormatError(`embedded key file ${path} is invalid`, { cause: err });
  }
  const mode = (await stat(path)).mode & 0o777;
  const loose = (mode & 0o077) !== 0;
  if (loose) await chmod(path, FILE_MODE);
  return { spec, path, permissionsFixed: loose };
}

async function writeKeyFile(path: string, spec: string): Promise<void> {
  const handle = await open(path, 'wx', FILE_MODE);
  try {
    await handle.chmod(FILE_MODE);
    await handle.writeFile(`${spec}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Embedded mode: reads the key-encryption key from `<dataDir>/secrets-encryption.key`, or
 * generates one there on first start (mode 0600). The key is written to a temporary file
 * and hard-linked into place, so two processes starting together agree on one complete
 * key. Distributed mode must use SECRETS_ENCRYPTION_KEY instead.
 */
export async function loadOrCreateEmbeddedKey(dataDir: string): Promise<EmbeddedKey> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, EMBEDDED_KEY_FILE);
  try {
    return { ...(await readExisting(path)), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const spec = newSpec();
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeKeyFile(tmp, spec);
  try {
    await link(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { ...(await readExisting(path)), created: false };
    throw err;
  } finally {
    await rm(tmp, { force: true });
  }
  return { spec, path, created: true, permissionsFixed: false };
}
