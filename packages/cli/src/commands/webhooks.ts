import type { Command } from 'commander';
import type { WebhookEndpointCreate } from '@agent-session-service/client';
import { clientFor, UsageError } from '../context.js';
import { printJson, printPage, printTable, type GlobalOptions } from '../output.js';

type Filter = NonNullable<WebhookEndpointCreate['filter']>;

/** The filter from the repeatable options; undefined when none was given. */
function filterOf(opts: { agent?: string[]; session?: string[]; tag?: string[] }): Filter | undefined {
  const filter: Filter = {
    ...(opts.agent?.length ? { agent_ids: opts.agent } : {}),
    ...(opts.session?.length ? { session_ids: opts.session } : {}),
    ...(opts.tag?.length ? { session_tags: opts.tag } : {}),
  };
  return Object.keys(filter).length ? filter : undefined;
}

/** `--overlap 3600` → 3600; a usage error for anything but a whole number of seconds. */
function seconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,6}$/.test(text)) throw new UsageError('--overlap takes a whole number of seconds');
  return Number(text);
}

/**
 * `webhooks list|create|delete|test|deliveries|redeliver|rotate-secret` (admins:
 * docs/decisions/0095-webhooks.md). The signing secret is printed once, by create and rotate-secret.
 */
export function webhooksCommand(program: Command): void {
  const webhooks = program.command('webhooks').description("the organisation's webhook endpoints and their deliveries (admins)");
  webhooks
    .command('list')
    .alias('ls')
    .description('list endpoints')
    .action(async (_opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const list = await clientFor(g).webhooks.list();
      if (g.json) printPage(list);
      else
        printTable(
          list.data.map((e) => ({ ...e, event_types: e.event_types.join(','), disabled_reason: e.disabled_reason ?? '' })),
          ['id', 'url', 'event_types', 'status', 'disabled_reason', 'consecutive_failures'],
        );
    });
  webhooks
    .command('create <url>')
    .description('register an endpoint; prints its signing secret (shown once)')
    .requiredOption('--event <type...>', 'event types to deliver (turn.completed, session.idled, …)')
    .option('--description <text>', 'description')
    .option('--agent <id...>', 'only sessions of these agents')
    .option('--session <id...>', 'only these sessions')
    .option('--tag <tag...>', 'only sessions with one of these tags')
    .action(
      async (
        url: string,
        opts: { event: string[]; description?: string; agent?: string[]; session?: string[]; tag?: string[] },
        cmd: Command,
      ) => {
        const g = cmd.optsWithGlobals<GlobalOptions>();
        const filter = filterOf(opts);
        const created = await clientFor(g).webhooks.create({
          url,
          event_types: opts.event as WebhookEndpointCreate['event_types'],
          ...(opts.description ? { description: opts.description } : {}),
          ...(filter ? { filter } : {}),
        });
        if (g.json) printJson(created);
        else process.stdout.write(`${created.endpoint.id}\nsecret (shown once): ${created.secret}\n`);
      },
    );
  webhooks
    .command('delete <id>')
    .alias('rm')
    .description('delete an endpoint and its delivery log')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      await clientFor(g).webhooks.remove(id);
      if (g.json) printJson({ deleted: id });
      else process.stdout.write(`deleted ${id}\n`);
    });
  webhooks
    .command('test <id>')
    .description('queue a signed webhook.test delivery to the endpoint')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const delivery = await clientFor(g).webhooks.testSend(id);
      if (g.json) printJson(delivery);
      else process.stdout.write(`${delivery.id}\n`);
    });
  webhooks
    .command('deliveries <id>')
    .description("the endpoint's deliveries, newest first (--delivery: one delivery with its attempts)")
    .option('--state <state>', 'pending, delivered or failed')
    .option('--limit <n>', 'at most this many (1-200)', '50')
    .option('--delivery <delivery_id>', 'one delivery and its attempts (status, latency, error)')
    .action(async (id: string, opts: { state?: string; limit: string; delivery?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const client = clientFor(g);
      if (opts.delivery) {
        const detail = await client.webhooks.delivery(id, opts.delivery);
        if (g.json) printJson(detail);
        else printTable(detail.attempts, ['attempt', 'started_at', 'status', 'latency_ms', 'error']);
        return;
      }
      if (opts.state && !['pending', 'delivered', 'failed'].includes(opts.state))
        throw new UsageError('--state is pending, delivered or failed');
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new UsageError('--limit is a whole number from 1 to 200');
      const page = await client.webhooks.deliveries(id, { limit, ...(opts.state ? { state: opts.state as 'pending' } : {}) });
      if (g.json) printPage(page);
      else printTable(page.data, ['id', 'event_type', 'state', 'attempts', 'last_status', 'last_error', 'next_attempt_at', 'delivered_at']);
    });
  webhooks
    .command('redeliver <id> <delivery_id>')
    .description('send a delivery again (same webhook-id), now')
    .action(async (id: string, deliveryId: string, _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const delivery = await clientFor(g).webhooks.redeliver(id, deliveryId);
      if (g.json) printJson(delivery);
      else process.stdout.write(`queued ${delivery.id}\n`);
    });
  webhooks
    .command('rotate-secret <id>')
    .description('a new signing secret (shown once); the previous one signs too during the overlap')
    .option('--overlap <seconds>', 'how long the previous secret still signs (default: the operator setting)')
    .action(async (id: string, opts: { overlap?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const overlap = seconds(opts.overlap);
      const rotated = await clientFor(g).webhooks.rotateSecret(id, overlap === undefined ? {} : { overlap_seconds: overlap });
      if (g.json) printJson(rotated);
      else
        process.stdout.write(
          `secret (shown once): ${rotated.secret}\n${rotated.previous_secret_expires_at ? `the previous secret signs until ${rotated.previous_secret_expires_at}\n` : ''}`,
        );
    });
}
