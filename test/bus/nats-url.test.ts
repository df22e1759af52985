import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { nkeys } from '@nats-io/transport-node';
import { natsConnectOptions } from '../../src/bus/nats/connect-options.js';
import { parseNatsUrl } from '../../src/bus/nats/nats-url.js';
import { ConfigError, loadConfig } from '../../src/config.js';

const DB = 'postgres://u@127.0.0.1/db';

test('NATS_URL - servers lose their credentials; user:pass (percent-decoded) or a token go to the connect options', () => {
  assert.deepEqual(parseNatsUrl('nats://svc:p%40ss%3Aw@n1:4222, nats://svc:p%40ss%3Aw@n2'), {
    servers: ['nats://n1:4222', 'nats://n2:4222'],
    credentials: { kind: 'user', user: 'svc', pass: 'p@ss:w' },
    tls: false,
  });
  assert.deepEqual(parseNatsUrl('s3cr3t@127.0.0.1:4223'), {
    servers: ['nats://127.0.0.1:4223'],
    credentials: { kind: 'token', token: 's3cr3t' },
    tls: false,
  });
  assert.deepEqual(parseNatsUrl('tls://u:@[::1]'), {
    servers: ['tls://[::1]:4222'],
    credentials: { kind: 'user', user: 'u', pass: '' },
    tls: true,
  });
  // Credentials on one server apply to all (one connection logs in once, also to gossiped servers).
  assert.deepEqual(parseNatsUrl('nats://a:b@n1,nats://n2').servers, ['nats://n1:4222', 'nats://n2:4222']);
  assert.equal(parseNatsUrl('n1,n2:5222').credentials, undefined);
});

test('NATS_URL - what cannot be used is refused without repeating the URL', () => {
  const cases: [string, RegExp][] = [
    ['nats://a:pw1@n1,nats://a:pw2@n2', /server 2 carries other credentials/],
    ['http://n1', /must be nats:\/\/, tls:\/\/ or host:port/],
    ['nats://n1/x', /path or query/],
    ['nats://:pw1@n1', /password but no user/],
    ['nats://%zz@n1', /badly percent-encoded/],
    ['nats://u:pw1@[::1', /not a valid URL/],
    [' , ', /names no server/],
  ];
  for (const [url, message] of cases) {
    assert.throws(() => parseNatsUrl(url), message, url);
    const err = (() => {
      try {
        loadConfig({ DATABASE_URL: DB, NATS_URL: url });
      } catch (e) {
        return e as Error;
      }
      return assert.fail(`config accepted ${url}`);
    })();
    assert.ok(err instanceof ConfigError && err.message.startsWith('invalid configuration: NATS_URL '), err.message);
    assert.ok(!/pw\d/.test(err.message), `no secret in: ${err.message}`);
  }
});

test('config - NATS auth settings need NATS_URL, one way to log in, and a TLS certificate with its key', () => {
  const seed = new TextDecoder().decode(nkeys.createUser().getSeed());
  const refused: [Record<string, string>, RegExp][] = [
    [{ NATS_CREDS: '/x.creds' }, /NATS_CREDS needs NATS_URL/],
    [{ NATS_TLS_CA: '/ca.pem' }, /NATS_TLS_CA needs NATS_URL/],
    [{ DATABASE_URL: DB, NATS_URL: 'nats://u:p@n1', NATS_CREDS: '/x.creds' }, /use one of credentials in NATS_URL, NATS_CREDS/],
    [{ DATABASE_URL: DB, NATS_URL: 'nats://n1', NATS_CREDS: '/x.creds', NATS_NKEY_SEED: seed }, /use one of NATS_CREDS, NATS_NKEY_SEED/],
    [{ DATABASE_URL: DB, NATS_URL: 'nats://n1', NATS_TLS_CERT: '/c.pem' }, /NATS_TLS_CERT and NATS_TLS_KEY go together/],
  ];
  for (const [env, message] of refused) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      JSON.stringify(env),
    );
  }
  const ok = loadConfig({
    DATABASE_URL: DB,
    NATS_URL: 'tls://n1',
    NATS_NKEY_SEED: seed,
    NATS_TLS_CA: '/ca.pem',
    NATS_TLS_CERT: '/c.pem',
    NATS_TLS_KEY: '/k.pem',
  });
  assert.equal(ok.mode, 'distributed');
  assert.equal(ok.NATS_TLS_KEY, '/k.pem');
});

test('connect options - URL credentials, creds file, nkey seed (value or file), TLS; unreadable or malformed files name the setting, never a secret', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nats-opts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const user = nkeys.createUser();
  const seed = new TextDecoder().decode(user.getSeed());
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  assert.deepEqual(await natsConnectOptions('nats://u:p%2F@n1'), { servers: ['nats://n1:4222'], user: 'u', pass: 'p/' });
  assert.deepEqual(await natsConnectOptions('t0ken@n1'), { servers: ['nats://n1:4222'], token: 't0ken' });
  // tls:// alone asks for TLS with the system's CAs; TLS files ask for it on nats:// too.
  assert.deepEqual((await natsConnectOptions('tls://n1')).tls, {});
  const ca = file('ca.pem', 'x');
  const cert = file('c.pem', 'x');
  const key = file('k.pem', 'x');
  assert.deepEqual((await natsConnectOptions('nats://n1', { tls: { caFile: ca, certFile: cert, keyFile: key } })).tls, {
    caFile: ca,
    certFile: cert,
    keyFile: key,
  });
  assert.equal((await natsConnectOptions('nats://n1', { tls: {} })).tls, undefined, 'no TLS unless asked for');

  const bySeed = await natsConnectOptions('nats://n1', { nkeySeed: seed });
  const nonce = 'bm9uY2U';
  const signed = (bySeed.authenticator as (n?: string) => { nkey: string; sig: string })(nonce);
  assert.equal(signed.nkey, user.getPublicKey());
  assert.ok(
    nkeys.fromPublic(user.getPublicKey()).verify(new TextEncoder().encode(nonce), Uint8Array.from(Buffer.from(signed.sig, 'base64url'))),
  );
  const byFile = await natsConnectOptions('nats://n1', { nkeySeed: file('user.nk', `${seed}\n`) });
  assert.equal((byFile.authenticator as (n?: string) => { nkey: string })(nonce).nkey, user.getPublicKey());

  // A character in the middle: the last one of a seed also holds padding bits, so changing it
  // may decode to the same bytes (a valid seed) — seen once in CI.
  const broken = `${seed.slice(0, 10)}${seed[10] === 'A' ? 'B' : 'A'}${seed.slice(11)}`;
  const failures: [() => Promise<unknown>, RegExp][] = [
    [() => natsConnectOptions('nats://n1', { nkeySeed: broken }), /^NATS_NKEY_SEED: not a user nkey seed/],
    [() => natsConnectOptions('nats://n1', { nkeySeed: join(dir, 'missing.nk') }), /^NATS_NKEY_SEED: cannot read .*missing\.nk \(ENOENT\)/],
    [() => natsConnectOptions('nats://n1', { nkeySeed: file('bad.nk', 'not a seed') }), /^NATS_NKEY_SEED: not a user nkey seed/],
    [() => natsConnectOptions('nats://n1', { credsFile: join(dir, 'missing.creds') }), /^NATS_CREDS: cannot read/],
    [() => natsConnectOptions('nats://n1', { credsFile: file('bad.creds', 'hello') }), /^NATS_CREDS: .* is not a \.creds file/],
    [() => natsConnectOptions('nats://n1', { tls: { caFile: join(dir, 'missing.pem') } }), /^NATS_TLS_CA: cannot read/],
    [() => natsConnectOptions('nats://n1', { tls: { certFile: cert } }), /NATS_TLS_CERT and NATS_TLS_KEY go together/],
    [() => natsConnectOptions('nats://u:p@n1', { nkeySeed: seed }), /use one of credentials in NATS_URL, NATS_NKEY_SEED/],
  ];
  for (const [p, message] of failures) {
    const err = await p().then(
      () => assert.fail(`accepted: ${message}`),
      (e: Error) => e,
    );
    assert.match(err.message, message);
    assert.ok(!err.message.includes(seed.slice(2, 20)) && !err.message.includes(broken.slice(2, 20)), `no seed in: ${err.message}`);
  }
});
