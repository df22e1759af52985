import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface CliConfig {
  url: string;
  key: string;
}

/**
 * `$AGENT_SESSION_CONFIG`, else `<config dir>/agent-session/config.json` where the config dir is
 * `$XDG_CONFIG_HOME`, `%APPDATA%` on Windows, or `~/.config`.
 */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env['AGENT_SESSION_CONFIG']) return env['AGENT_SESSION_CONFIG'];
  const base = env['XDG_CONFIG_HOME'] || (process.platform === 'win32' && env['APPDATA']) || join(homedir(), '.config');
  return join(base, 'agent-session', 'config.json');
}

export function readConfig(path = configPath()): Partial<CliConfig> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Partial<CliConfig>;
  } catch {
    return {};
  }
}

/** Writes the config readable by its owner only (file 0600, folder 0700): it holds an API key. */
export function writeConfig(config: CliConfig, path = configPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  chmodSync(path, 0o600);
}
