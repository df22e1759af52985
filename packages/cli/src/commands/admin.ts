import type { Command } from 'commander';
import { clientFor, UsageError } from '../context.js';
import { printJson, printPage, printTable, type GlobalOptions } from '../output.js';

const ROTATE_KEYS = `rotate-keys re-wraps every sealed value (provider keys, session secrets, the token signing key)
with the current SECRETS_ENCRYPTION_KEY. It needs that key, the previous one and direct database
access, which no API caller has and which the service never exposes over HTTP. Run it on a host of
the deployment, with the instances' environment:

  SECRETS_ENCRYPTION_KEY=<new> SECRETS_ENCRYPTION_KEY_PREVIOUS=<old> npm run rotate-keys [-- --dry-run]

(docs/operations.md section 9; docs/decisions/0060-client-package-and-cli.md).
`;

/** `admin keys|users|rotate-keys`. */
export function adminCommand(program: Command): void {
  const admin = program.command('admin').description('API keys, users and key rotation');

  const keys = admin.command('keys').description('API keys');
  keys
    .command('ls')
    .description("list live API keys (yours; --org: the organisation's, admins only)")
    .option('--org', 'every key of the organisation')
    .action(async (opts: { org?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const list = await clientFor(g).auth.apiKeys.list({ scope: opts.org ? 'org' : 'own' });
      if (g.json) printPage(list);
      else printTable(list.data, ['id', 'name', 'prefix', 'user_id', 'expires_at', 'last_used_at']);
    });
  keys
    .command('create')
    .description('create an API key for yourself (shown once)')
    .requiredOption('--name <name>', 'key name')
    .option('--expires-at <iso>', 'expiry time (ISO 8601)')
    .action(async (opts: { name: string; expiresAt?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const created = await clientFor(g).auth.apiKeys.create({
        name: opts.name,
        ...(opts.expiresAt ? { expires_at: opts.expiresAt } : {}),
      });
      if (g.json) printJson(created);
      else process.stdout.write(`${created.key}\n`);
    });
  keys
    .command('revoke <id>')
    .description('revoke an API key')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      await clientFor(g).auth.apiKeys.revoke(id);
      if (g.json) printJson({ revoked: id });
      else process.stdout.write(`revoked ${id}\n`);
    });

  const users = admin.command('users').description('users of your organisation');
  users
    .command('ls')
    .description('list users')
    .action(async (_opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const list = await clientFor(g).users.list();
      if (g.json) printPage(list);
      else printTable(list.data, ['id', 'email', 'name', 'role', 'created_at']);
    });
  users
    .command('create')
    .description('create a user (admin)')
    .requiredOption('--email <email>', 'email')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--password <password>', 'initial password')
    .option('--role <role>', 'member or admin', 'member')
    .action(async (opts: { email: string; name: string; password: string; role: 'member' | 'admin' }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const user = await clientFor(g).users.create({ email: opts.email, name: opts.name, password: opts.password, role: opts.role });
      if (g.json) printJson(user);
      else process.stdout.write(`${user.id}\n`);
    });
  users
    .command('rm <id>')
    .description('delete a user with their API keys and logins (admin)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      await clientFor(g).users.remove(id);
      if (g.json) printJson({ deleted: id });
      else process.stdout.write(`deleted ${id}\n`);
    });

  admin
    .command('rotate-keys')
    .description('explains why key rotation is a server-side command, and how to run it')
    .action(() => {
      throw new UsageError(ROTATE_KEYS);
    });
}
