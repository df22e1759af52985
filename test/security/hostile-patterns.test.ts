import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createSession, runTools, upload } from '../api/fs/helpers.js';
import { deepYaml, yamlAliasBomb } from '../helpers/hostile-inputs.js';

/** Hostile inputs from issue 12: caller regexes, globs, YAML and JSON Schemas must not stall the service. */

const PARSE_TIMEOUT_MS = 1000;

async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await work;
  return [value, performance.now() - start];
}

describe('hostile patterns and documents', () => {
  let app: TestApp;
  let pages: Server;
  let pagesUrl = '';
  const cleanups: (() => unknown)[] = [];
  before(async () => {
    // Measured inline: 8,000 unclosed `<b>` took 4.4 s in node-html-parser; this is 1 MB of them.
    const hostileHtml = `<html><body>${'<b>'.repeat(350_000)}</body></html>`;
    pages = createServer((req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(req.url === '/hostile' ? hostileHtml : '<html><body><h1>Fine</h1></body></html>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    cleanups.push(
      () => pages.closeAllConnections(),
      () => pages.close(),
    );
    app = await startTestApp(
      { after: (fn: () => unknown) => void cleanups.push(fn) },
      { mode: 'postgres', env: { PARSE_TIMEOUT_MS, WEB_FETCH_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } },
    );
    // The parse pool starts its workers on first use (about half a second); the timings below are of the hostile inputs, not that.
    const warm = await app.request('POST', '/v1/agents/import', {
      raw: 'name: warm-up\nsystem_prompt: hi\n',
      headers: { 'content-type': 'application/yaml' },
    });
    assert.equal(warm.status, 201, warm.text);
    // So does the grep pool.
    const warmGrep = await app.request('POST', `/v1/sessions/${await createSession(app)}/fs/_/grep`, { body: { pattern: 'warm' } });
    assert.equal(warmGrep.status, 200, warmGrep.text);
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  const grep = (id: string, body: Record<string, unknown>) => app.request('POST', `/v1/sessions/${id}/fs/_/grep`, { body });
  const importYaml = (doc: string) =>
    app.request('POST', '/v1/agents/import', { raw: doc, headers: { 'content-type': 'application/yaml' } });

  it("POST fs/_/grep - ^(a+)+$ over a line of 10,000 a's answers in milliseconds with the right match", async () => {
    const id = await createSession(app);
    assert.equal((await upload(app, id, 'redos.txt', `${'a'.repeat(10_000)}\n${'a'.repeat(10_000)}b\n`)).status, 201);
    const [r, ms] = await timed(grep(id, { pattern: '^(a+)+$' }));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.data.map((f: any) => [f.path, f.matches.map((m: any) => m.line_number)]),
      [['/redos.txt', [1]]],
    );
    assert.ok(ms < 500, `grep took ${ms.toFixed(0)} ms`);
    const [ci, ciMs] = await timed(grep(id, { pattern: '^(A+)+B$', ignore_case: true }));
    assert.deepEqual(
      ci.body.data[0].matches.map((m: any) => m.line_number),
      [2],
    );
    assert.ok(ciMs < 500, `case-insensitive grep took ${ciMs.toFixed(0)} ms`);
    const [alt, altMs] = await timed(grep(id, { pattern: '(a|aa)*c' }));
    assert.equal(alt.status, 200, alt.text);
    assert.deepEqual(alt.body.data, [], 'no line holds a c');
    assert.ok(altMs < 500, `(a|aa)*c took ${altMs.toFixed(0)} ms`);
  });

  it('POST fs/_/grep - backreferences and lookaround are a 400 {error, status} naming them; JS \\u escapes still work', async () => {
    const id = await createSession(app);
    await upload(app, id, 'a.txt', 'café\nabab\n');
    const backref = await grep(id, { pattern: '(ab)\\1' });
    assert.equal(backref.status, 400);
    assert.deepEqual(Object.keys(backref.body).sort(), ['error', 'status']);
    assert.equal(backref.body.status, 400);
    assert.match(backref.body.error, /backreferences .* not supported.*linear-time/);
    const look = await grep(id, { pattern: 'a(?=b)' });
    assert.equal(look.status, 400);
    assert.match(look.body.error, /lookahead and lookbehind .* not supported/);
    assert.equal((await grep(id, { pattern: '(' })).status, 400);
    assert.equal((await grep(id, { pattern: 'caf\\u00e9' })).body.data[0].matches[0].line_number, 1);
  });

  it('POST fs/_/grep - a line is matched and returned on its first 16,384 characters', async () => {
    const id = await createSession(app);
    await upload(app, id, 'long.txt', `${'x'.repeat(20_000)}end\n`);
    assert.deepEqual((await grep(id, { pattern: 'end' })).body.data, []);
    const hit = await grep(id, { pattern: '^x+$' });
    assert.equal(hit.body.data[0].matches[0].line.length, 16_384);
  });

  it('POST fs/_/grep - globs still select files, and a backtracking-hostile glob is fast', async () => {
    const id = await createSession(app);
    const longName = `${'a'.repeat(200)}.txt`;
    for (const path of ['docs/x.md', 'src/y.txt', longName]) await upload(app, id, path, 'needle\n');
    const paths = async (path_pattern: string) => (await grep(id, { pattern: 'needle', path_pattern })).body.data.map((f: any) => f.path);
    assert.deepEqual(await paths('*.md'), ['/docs/x.md']);
    assert.deepEqual(await paths('src/**'), ['/src/y.txt']);
    assert.deepEqual(await paths('{docs,src}/*.{md,txt}'), ['/docs/x.md', '/src/y.txt']);
    const [hostile, ms] = await timed(grep(id, { pattern: 'needle', path_pattern: `${'*a'.repeat(30)}b` }));
    assert.equal(hostile.status, 200);
    assert.deepEqual(hostile.body.data, []);
    assert.ok(ms < 500, `hostile glob took ${ms.toFixed(0)} ms`);
  });

  it('grep_files tool - the ReDoS pattern matches quickly; lookahead is a tool error naming it', async () => {
    const id = await createSession(app);
    await upload(app, id, 'redos.txt', `${'a'.repeat(10_000)}\n${'a'.repeat(10_000)}b\n`);
    const [[ok, bad], ms] = await timed(
      runTools(app, id, [
        ['grep_files', { pattern: '^(a+)+$' }],
        ['grep_files', { pattern: '(?!a)b' }],
      ]),
    );
    assert.equal(ok!.success, true, ok!.error);
    assert.deepEqual(
      ok!.result.results.map((r: any) => [r.path, r.matches.map((m: any) => m.line_number)]),
      [['/redos.txt', [1]]],
    );
    assert.equal(bad!.success, false);
    assert.match(bad!.error!, /lookahead and lookbehind .* not supported/);
    assert.ok(ms < 5000, `the turn took ${ms.toFixed(0)} ms`);
  });

  it('POST /v1/agents/import - a YAML alias bomb is a 400 naming aliases, fast', async () => {
    const [r, ms] = await timed(importYaml(yamlAliasBomb()));
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['error', 'status']);
    assert.match(r.body.error, /too many alias expansions/);
    assert.ok(ms < 1000, `bomb import took ${ms.toFixed(0)} ms`);
  });

  it('POST /v1/agents/import - aliases that expand past 4 MB, nesting past 64 levels, and a parse past the deadline are 400s', async () => {
    const wide = `name: wide\nsystem_prompt: hi\nx: &x "${'a'.repeat(100_000)}"\ny: [${Array(99).fill('*x').join(',')}]\n`;
    const expanded = await importYaml(wide);
    assert.equal(expanded.status, 400);
    assert.match(expanded.body.error, /expands to more than 4194304 characters/);
    const deep = await importYaml(`name: deep\nsystem_prompt: hi\nx: ${'['.repeat(100)}${']'.repeat(100)}\n`);
    assert.equal(deep.status, 400);
    assert.match(deep.body.error, /nests deeper than 64 levels/);
    // Each half nests 40 levels in the text; the alias puts one inside the other (81 levels).
    const nested = `${'['.repeat(40)}*a${']'.repeat(40)}`;
    const viaAlias = await importYaml(`name: alias-deep\nsystem_prompt: hi\na: &a ${'['.repeat(40)}1${']'.repeat(40)}\nb: ${nested}\n`);
    assert.equal(viaAlias.status, 400);
    assert.match(viaAlias.body.error, /nests deeper than 64 levels \(YAML aliases included\)/);
    // Measured: 1M nested flow sequences keep the yaml parser busy for ~12 s.
    const [slow, ms] = await timed(importYaml(deepYaml()));
    assert.equal(slow.status, 400);
    assert.match(slow.body.error, /too large or too complex to process \(stopped after 1 s\)/);
    assert.ok(ms < PARSE_TIMEOUT_MS + 2000, `deep import took ${ms.toFixed(0)} ms`);
    const fine = await importYaml('name: still-works\nsystem_prompt: hello\n');
    assert.equal(fine.status, 201, fine.text);
  });

  it('POST /v1/agents - a client tool schema that takes seconds to compile is stopped at the deadline', async () => {
    // Measured: ajv compiles a 200,000-value enum in ~49 s on the event loop.
    const parameters = { type: 'object', properties: { a: { enum: Array.from({ length: 200_000 }, (_, i) => i) } } };
    const [r, ms] = await timed(
      app.request('POST', '/v1/agents', {
        body: { name: 'enum', system_prompt: 'x', client_tools: [{ name: 'big', description: 'd', parameters }] },
      }),
    );
    assert.equal(r.status, 400, r.text);
    assert.match(r.body.error, /client tool schema is too large or too complex/);
    assert.ok(ms < PARSE_TIMEOUT_MS + 3000, `took ${ms.toFixed(0)} ms`);
  });

  it('fetch_url - 1 MB of nested unclosed tags is a tool error at the parse deadline; an ordinary page still converts', async () => {
    const id = await createSession(app, ['web_fetch']);
    const [[hostile, fine], ms] = await timed(
      runTools(app, id, [
        ['fetch_url', { url: `${pagesUrl}/hostile` }],
        ['fetch_url', { url: `${pagesUrl}/fine` }],
      ]),
    );
    assert.equal(hostile!.success, false);
    assert.match(hostile!.error!, /too large or too complex to convert \(stopped after 1 s\); try format "raw"/);
    assert.equal(fine!.success, true, fine!.error);
    assert.equal(fine!.result.kind, 'html');
    assert.ok(ms < PARSE_TIMEOUT_MS + 4000, `the turn took ${ms.toFixed(0)} ms`);
  });

  it('POST /v1/images - a multipart body of 100,000 empty parts is a 400 before it is split', async () => {
    const boundary = 'hostile0boundary';
    const body = `${`--${boundary}\r\nContent-Disposition: form-data; name="f"\r\n\r\nv\r\n`.repeat(100_000)}--${boundary}--\r\n`;
    const [r, ms] = await timed(
      fetch(`${app.url}/v1/images`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${app.adminKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      }),
    );
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { error: string }).error, /at most 32 parts/);
    assert.ok(ms < 1000, `took ${ms.toFixed(0)} ms`);
  });
  // /health while all of these are in flight at once: test/security/event-loop.test.ts.
});
