import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { FAST_WEBHOOKS, startReceiver } from '../webhooks/receiver.js';
import { cliOk as ok, runCli as cli } from './cli-run.js';
import { buildPackages } from './helpers.js';

describe('agent-session webhooks (CLI) against the service and a real receiver', () => {
  before(() => buildPackages());

  it('create (secret once), list, test, deliveries (table, --json, --delivery), redeliver, rotate-secret, delete; bad input is a usage error', async (t) => {
    const app = await startTestApp(t, { mode: 'pglite', env: FAST_WEBHOOKS });
    const rx = await startReceiver(t);
    const run = (...args: string[]) => cli(app.url, app.adminKey, args);

    const created = await run(
      'webhooks',
      'create',
      rx.url,
      '--event',
      'turn.completed',
      'session.idled',
      '--description',
      'crm',
      '--tag',
      'vip',
    );
    ok(created);
    const [id, secretLine] = created.stdout.trim().split('\n');
    assert.match(id!, /^[0-9a-f-]{36}$/);
    const secret = /^secret \(shown once\): (whsec_\S+)$/.exec(secretLine!)?.[1];
    assert.ok(secret, created.stdout);
    rx.secrets = [secret];

    const table = await run('webhooks', 'list');
    ok(table);
    const [header, row] = table.stdout.trim().split('\n');
    assert.match(header!, /^ID\s+URL\s+EVENT_TYPES\s+STATUS/);
    assert.match(row!, new RegExp(`^${id}\\s+${rx.url.replace(/[.]/g, '\\.')}\\s+\\S*turn\\.completed\\S*\\s+active`));
    const listed = JSON.parse((await run('webhooks', 'ls', '--json')).stdout);
    assert.deepEqual(Object.keys(listed), ['data', 'total']);
    assert.equal(listed.data[0].id, id);
    assert.deepEqual(listed.data[0].filter, { session_tags: ['vip'] });
    assert.ok(!JSON.stringify(listed).includes(secret.slice(6)), 'the secret is not in a listing');

    const test = await run('webhooks', 'test', id!, '--json');
    ok(test);
    const delivery = JSON.parse(test.stdout);
    await rx.waitFor((all) => all.some((r) => r.json.type === 'webhook.test'), 20_000);
    assert.deepEqual(rx.received[0]!.verifiedBy, [0], 'signed with the secret the CLI printed');

    // The delivery log as a table once it is delivered, then as JSON, then one delivery's attempts.
    let deliveries = '';
    for (let i = 0; i < 100 && !/delivered/.test(deliveries); i++) {
      deliveries = (await run('webhooks', 'deliveries', id!)).stdout;
      if (!/delivered/.test(deliveries)) await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(deliveries, new RegExp(`${delivery.id}\\s+webhook\\.test\\s+delivered\\s+1\\s+200`));
    const page = JSON.parse((await run('webhooks', 'deliveries', id!, '--json', '--state', 'delivered')).stdout);
    assert.deepEqual([page.total, page.data[0].id, page.data[0].state], [1, delivery.id, 'delivered']);
    const attempts = await run('webhooks', 'deliveries', id!, '--delivery', delivery.id);
    ok(attempts);
    assert.match(attempts.stdout, /^ATTEMPT\s+STARTED_AT\s+STATUS\s+LATENCY_MS/);
    assert.match(attempts.stdout.split('\n')[1]!, /^1\s+\S+\s+200\s+\d+/);

    ok(await run('webhooks', 'redeliver', id!, delivery.id));
    await rx.waitFor((all) => all.filter((r) => r.id === `msg_${delivery.id}`).length === 2, 20_000, 'the redelivery');

    const rotated = await run('webhooks', 'rotate-secret', id!, '--overlap', '60');
    ok(rotated);
    const fresh = /^secret \(shown once\): (whsec_\S+)$/m.exec(rotated.stdout)?.[1];
    assert.ok(fresh && fresh !== secret, rotated.stdout);
    assert.match(rotated.stdout, /the previous secret signs until \d{4}-/);

    const badState = await run('webhooks', 'deliveries', id!, '--state', 'lost');
    assert.equal(badState.code, 2, badState.stderr);
    const badOverlap = await run('webhooks', 'rotate-secret', id!, '--overlap', 'soon');
    assert.equal(badOverlap.code, 2, badOverlap.stderr);
    const badEvent = await run('webhooks', 'create', rx.url, '--event', 'turn.text.delta');
    assert.equal(badEvent.code, 1);
    assert.match(badEvent.stderr, /^error: /);

    ok(await run('webhooks', 'delete', id!));
    assert.equal(JSON.parse((await run('webhooks', 'list', '--json')).stdout).total, 0);
    const gone = await run('webhooks', 'rm', id!);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^error: /);
  });
});
