import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The single-writer lock of an embedded data directory (PGlite cannot be shared: two processes
 * on one directory each see half the writes and lose the rest). A lock file created with O_EXCL
 * names its holder; a second process refuses at once with that name. A lock whose holder is
 * gone (same host: the pid is dead or now belongs to another process, told apart by its start
 * time; another host: no heartbeat for STALE_AFTER_MS) is taken over under a takeover mutex, so
 * two processes finding the same stale lock cannot both win.
 */

export const LOCK_FILE = 'instance.lock';
/** DATA_DIR's default (src/config.ts uses it too). */
export const DEFAULT_DATA_DIR = './data';
/** The holder touches the lock file this often… */
export const HEARTBEAT_MS = 5_000;
/** …and a lock from another host without a touch for this long is stale. */
export const STALE_AFTER_MS = 30_000;
/** A takeover mutex older than this was left by a process that died mid-takeover. */
const TAKEOVER_STALE_MS = 10_000;
/** How long to wait for another process's takeover before looking again. */
const TAKEOVER_WAIT_MS = 1_500;

/** What the lock file says about its holder. */
export interface LockHolder {
  /** `service` or `rotate-keys`. */
  holder: string;
  pid: number;
  hostname: string;
  /** Linux boot id: the same hostname after a reboot is another host as far as pids go. */
  boot_id?: string;
  /** Start time of the process in clock ticks since boot (Linux /proc/<pid>/stat), against pid reuse. */
  start_ticks?: string;
  host?: string;
  /** The configured port until the server listens, then the bound one. */
  port?: number;
  listening?: boolean;
  started_at: string;
}

/** Thrown when the directory is held by a live process; the message names it. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly current: LockHolder,
    action: string,
  ) {
    super(
      `${action}: data directory ${dataDir} is in use by ${describeHolder(current)} (lock file ${join(dataDir, LOCK_FILE)}); stop that process first`,
    );
    this.name = 'DataDirLockedError';
  }
}

export function describeHolder(h: LockHolder): string {
  const where = h.port !== undefined ? `, port ${h.port}${h.listening ? '' : ' (configured, not yet listening)'}` : '';
  return `${h.holder} pid ${h.pid}${where} on host ${h.hostname}, since ${h.started_at}`;
}

export interface DataDirLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** Records the bound address in the lock file (the refusal message names it). */
  setListening(host: string, port: number): void;
  /** Removes the lock file (only if it is still ours). Idempotent. */
  release(): void;
}

export interface AcquireOptions {
  /** `service` or `rotate-keys`. */
  holder: string;
  host?: string;
  port?: number;
  /** What the caller was trying to do, for the message ("cannot start"). */
  action?: string;
}

/** Takes the lock of `dataDir` (created if missing) or throws DataDirLockedError naming the holder. */
export async function acquireDataDirLock(dataDir: string, opts: AcquireOptions): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const me: LockHolder = {
    holder: opts.holder,
    pid: process.pid,
    hostname: hostname(),
    boot_id: bootId(),
    start_ticks: startTicks(process.pid),
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    ...(opts.port !== undefined ? { port: opts.port, listening: false } : {}),
    started_at: new Date().toISOString(),
  };
  const action = opts.action ?? 'cannot start';
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(path, me)) return held(path, me);
    const current = readHolder(path);
    if (current === undefined) {
      // Vanished, or half-written by a creator: look again.
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    if (isAlive(current, path)) throw new DataDirLockedError(dir, current, action);
    if (attempt >= 5) throw new DataDirLockedError(dir, current, `${action} (stale lock could not be taken over)`);
    await takeOver(path, current);
  }
}

/**
 * The live holder of `dataDir`'s lock, if any, without taking it: src/main.ts looks before it
 * loads the configuration and the app (seconds of imports), so a second start is refused at once.
 */
export function liveHolder(dataDir: string): LockHolder | undefined {
  const path = join(resolve(dataDir), LOCK_FILE);
  const current = readHolder(path);
  return current && isAlive(current, path) ? current : undefined;
}

function tryCreate(path: string, me: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(me) + '\n');
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The holder, or undefined when the file is gone or not (yet) complete JSON. */
function readHolder(path: string): LockHolder | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const h = JSON.parse(text) as LockHolder;
    return typeof h.pid === 'number' ? h : unreadable(path);
  } catch {
    // A creator writes right after O_EXCL: give it a moment, then treat garbage as stale.
    return ageMs(path) < 2_000 ? undefined : unreadable(path);
  }
}

function unreadable(path: string): LockHolder {
  return { holder: 'unknown (unreadable lock file)', pid: -1, hostname: '', started_at: new Date(statSync(path).mtimeMs).toISOString() };
}

/** Whether the recorded holder still runs (see the module comment). */
function isAlive(h: LockHolder, path: string): boolean {
  if (h.pid < 0) return false;
  const sameHost = h.hostname === hostname() && (h.boot_id ?? '') === (bootId() ?? '');
  if (!sameHost) return ageMs(path) < STALE_AFTER_MS;
  if (h.pid === process.pid) return false; // an earlier life of this pid (e.g. pid 1 in a restarted container)
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it exists, owned by someone else.
  }
  const ticks = startTicks(h.pid);
  return h.start_ticks === undefined || ticks === undefined || ticks === h.start_ticks;
}

/** Removes a stale lock file, under a mutex directory so only one process removes it. */
async function takeOver(path: string, stale: LockHolder): Promise<void> {
  const mutex = path + '.takeover';
  try {
    mkdirSync(mutex);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (ageMs(mutex) > TAKEOVER_STALE_MS) rmdirSync(mutex);
    else await new Promise((r) => setTimeout(r, TAKEOVER_WAIT_MS));
    return;
  }
  try {
    const now = readHolder(path);
    // Still the same stale holder (nobody took over in between): remove it.
    if (now && now.pid === stale.pid && now.started_at === stale.started_at) unlinkSync(path);
  } finally {
    rmdirSync(mutex);
  }
}

function held(path: string, me: LockHolder): DataDirLock {
  let current = me;
  let released = false;
  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // The file was removed by hand; nothing to keep alive.
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const ours = () => {
    const h = readHolder(path);
    return h !== undefined && h.pid === me.pid && h.started_at === me.started_at;
  };
  const releaseSync = () => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
    process.off('exit', releaseSync);
    try {
      if (ours()) unlinkSync(path);
    } catch {
      // Best effort: a lock left behind is stale and taken over by the next start.
    }
  };
  process.on('exit', releaseSync);
  return {
    path,
    get holder() {
      return current;
    },
    setListening(host: string, port: number) {
      current = { ...current, host, port, listening: true };
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(current) + '\n', { mode: 0o644 });
      renameSync(tmp, path);
    },
    release: releaseSync,
  };
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
