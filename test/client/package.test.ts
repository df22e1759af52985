import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { REPO_ROOT, buildPackages } from './helpers.js';

const CLIENT = join(REPO_ROOT, 'packages', 'client');

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

describe('packages/client as a package', () => {
  before(() => buildPackages());

  it('the built client imports only its two dependencies and relative files: no Node-only module (browsers)', () => {
    const pkg = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(pkg.dependencies).sort(), ['eventsource-parser', 'openapi-fetch']);
    const specifiers = new Set<string>();
    for (const file of jsFiles(join(CLIENT, 'dist'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g))
        specifiers.add(m[1] ?? m[2]!);
      assert.doesNotMatch(text, /\b(require\(|process\.|Buffer\b|__dirname)/, file);
    }
    const external = [...specifiers].filter((s) => !s.startsWith('.'));
    assert.deepEqual(external.sort(), ['eventsource-parser', 'openapi-fetch']);
  });

  it('exports the typed client, the stream and the helpers by name', async () => {
    const mod = await import('@agent-session-service/client');
    for (const name of [
      'createAgentSessionClient',
      'SessionEventStream',
      'sendAndWait',
      'serveClientTools',
      'ApiError',
      'isEvent',
      'messageText',
    ]) {
      assert.ok(name in mod, name);
    }
    const client = mod.createAgentSessionClient({ baseUrl: 'http://127.0.0.1:1/', apiKey: 'k' });
    assert.equal(client.baseUrl, 'http://127.0.0.1:1');
  });
});
