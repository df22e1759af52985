import { cpus, release, totalmem } from 'node:os';
import { spawnSync } from 'node:child_process';
import { cpuCount } from './process.js';

/** What a result was measured on, recorded next to every figure. */
export interface MachineInfo {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  node: string;
  gitCommit: string | null;
  /** Files under src/ or schemas/ that differ from that commit (measured code != commit). */
  uncommittedSourceFiles: number | null;
}

export function machineInfo(): MachineInfo {
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  const status = spawnSync('git', ['status', '--porcelain', '--', 'src', 'schemas'], { encoding: 'utf8' });
  return {
    date: new Date().toISOString(),
    cpus: cpuCount(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    gitCommit: git.status === 0 ? git.stdout.trim() : null,
    uncommittedSourceFiles: status.status === 0 ? status.stdout.split('\n').filter(Boolean).length : null,
  };
}
