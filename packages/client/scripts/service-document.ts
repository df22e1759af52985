import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';

/**
 * The document `GET /api-doc/openapi.json` serves, from a throwaway embedded instance (PGlite in a
 * temporary directory, API role, no prefix) that is closed again; `url` reads a running service's
 * instead.
 */
export async function fetchServiceDocument(url?: string): Promise<Record<string, unknown>> {
  if (url) return readDocument(url);
  const dataDir = mkdtempSync(join(tmpdir(), 'ass-openapi-'));
  const quiet = new Writable({ write: (_chunk, _enc, cb) => cb() });
  try {
    const config = loadConfig(
      {},
      { PORT: 0, DATA_DIR: dataDir, ROLE: 'api', LOG_LEVEL: 'warn', BOOTSTRAP_ADMIN_API_KEY: 'openapi-generator-key-0123456789' },
    );
    const app = await createApp(config, { logDestination: quiet });
    try {
      return await readDocument(app.url);
    } finally {
      await app.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function readDocument(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(new URL('/api-doc/openapi.json', url));
  if (!res.ok) throw new Error(`GET /api-doc/openapi.json: ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}
