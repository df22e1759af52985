import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private PostgreSQL for the chaos suite (initdb + pg_ctl in a temp dir on a free port), so
 * stopping it for a fault touches nobody else's database. initdb refuses to run as root, so
 * as root the cluster belongs to the `postgres` system user and every pg_ctl runs as that user.
 */
export interface PrivatePostgres {
  url: string;
  port: number;
  /** pg_ctl stop -m fast: every connection is closed, new ones are refused until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): void;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error(`no PostgreSQL under ${root} (initdb and pg_ctl are needed)`);
  return join(root, versions[0]!, 'bin');
}

const execFileAsync = promisify(execFile);

/** As runAs, without blocking the event loop: the workload in this process keeps running during a fault. */
async function runAsAsync(user: string | null, command: string, args: string[]): Promise<void> {
  const [cmd, argv] = user ? ['runuser', ['-u', user, '--', command, ...args]] : [command, args];
  await execFileAsync(cmd, argv);
}

function runAs(user: string | null, command: string, args: string[]): void {
  const [cmd, argv] = user ? ['runuser', ['-u', user, '--', command, ...args]] : [command, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
}

export function startPrivatePostgres(port: number): PrivatePostgres {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'chaos-pg-'));
  const user = process.getuid?.() === 0 ? 'postgres' : null;
  if (user) {
    const id = spawnSync('id', ['-u', user], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
    chownSync(dir, Number(id.stdout.trim()), Number(gid.stdout.trim()));
  }
  const data = join(dir, 'data');
  runAs(user, join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  // fsync off: the fault is a stopped server, not a lost disk, and the machine is shared.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off`;
  const pgCtl = (...args: string[]) => runAs(user, join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const pgCtlAsync = (...args: string[]) => runAsAsync(user, join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const startArgs = ['-l', join(dir, 'log'), '-o', options, '-w', 'start'];
  pgCtl(...startArgs);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pgCtlAsync('-m', 'fast', '-w', 'stop'),
    start: () => pgCtlAsync(...startArgs),
    destroy() {
      try {
        pgCtl('-m', 'immediate', '-w', 'stop');
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
