/** Installs a peer's packages into its own folder under bench/.cache (git-ignored, out of the project's dependencies). */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `npm install` of `packages` into `dir` unless every file of `installed` (under node_modules) is there; null = ready. */
export function npmInstall(
  dir: string,
  name: string,
  packages: readonly string[],
  installed: readonly string[],
  log: (m: string) => void,
): string | null {
  mkdirSync(dir, { recursive: true });
  if (installed.every((f) => existsSync(join(dir, 'node_modules', f)))) return null;
  if (!existsSync(join(dir, 'package.json')))
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }) + '\n');
  log(`[${name}] installing ${packages.join(' ')} into ${dir} …`);
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', ...packages], { cwd: dir, encoding: 'utf8', timeout: 900_000 });
  if (r.status !== 0)
    return `npm install failed (${r.status ?? r.signal ?? r.error?.message}): ${(r.stderr || r.stdout || '').slice(-1500)}`;
  return null;
}
