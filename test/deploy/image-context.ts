import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import dockerignoreModule, { type Ignore } from '@balena/dockerignore';

// A CommonJS module whose typings declare an ES default export: Node's default import is the factory itself.
const dockerignore = dockerignoreModule as unknown as () => Ignore;

/**
 * The image's build, replayed without a Docker engine (issue 30 item 12): the build context is
 * what `git ls-files` holds (a clean clone) filtered by deploy/Dockerfile.dockerignore with
 * Docker's own matching rules (@balena/dockerignore ports moby's), and a stage's COPY, WORKDIR
 * and RUN instructions run in a directory that stands for the stage's filesystem.
 */

/** The tracked files of `root` that survive `ignoreFile`: what BuildKit sends as the context. */
export function buildContextFiles(root: string, ignoreFile: string): string[] {
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  return dockerignore()
    .add(readFileSync(join(root, ignoreFile), 'utf8'))
    .filter(tracked);
}

/** Copies `files` (paths relative to `root`) into `dir`. */
export function copyFiles(root: string, files: string[], dir: string): void {
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(root, file), join(dir, file));
  }
}

export interface Instruction {
  op: string;
  args: string;
}

export interface Stage {
  name: string;
  instructions: Instruction[];
}

/** The stages of a Dockerfile with their instructions (continuation lines joined, comments dropped). */
export function parseDockerfile(text: string): Stage[] {
  const joined = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, op, args] = m as unknown as [string, string, string];
    if (op === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.length}`, instructions: [] });
    else stages.at(-1)?.instructions.push({ op, args: args.trim() });
  }
  return stages;
}

export interface StageRun {
  /** The stage's WORKDIR, as a directory on this machine. */
  workdir: string;
  /** Output of the RUN steps that ran. */
  output: string;
}

/**
 * Runs `stage` in `fsRoot` (its `/`): COPY from `context` (or, with --from=<stage>, from that
 * stage's directory in `stageRoots`) and RUN through bash. An `npm ci` cannot run offline: its
 * node_modules becomes a link to `nodeModules` (the checkout's, installed from the same lock
 * file). RUN steps that only touch the image's own paths (/data, ownership) are skipped.
 */
export function runStage(stage: Stage, fsRoot: string, context: string, stageRoots: Record<string, string>, nodeModules: string): StageRun {
  let workdir = fsRoot;
  let output = '';
  const inFs = (p: string) => (p.startsWith('/') ? join(fsRoot, p) : join(workdir, p));
  for (const { op, args } of stage.instructions) {
    if (op === 'WORKDIR') {
      workdir = inFs(args);
      mkdirSync(workdir, { recursive: true });
    } else if (op === 'COPY') {
      const parts = args.split(/\s+/);
      const from = parts[0]?.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : undefined;
      const dest = parts.pop()!;
      for (const src of parts) {
        const source = from ? join(stageRoots[from]!, src) : join(context, src);
        if (from && src.endsWith('node_modules')) {
          symlinkSync(nodeModules, inFs(dest));
          continue;
        }
        const target = dest.endsWith('/') && src !== '.' ? join(inFs(dest), src.split('/').pop()!) : inFs(dest);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(source, target, { recursive: true });
      }
    } else if (op === 'RUN') {
      if (/^npm ci\b/.test(args)) {
        symlinkSync(nodeModules, join(workdir, 'node_modules'));
        continue;
      }
      if (/^mkdir -p \/data\b/.test(args)) continue;
      const run = spawnSync('bash', ['-c', args], { cwd: workdir, encoding: 'utf8', timeout: 600_000 });
      output += run.stdout + run.stderr;
      if (run.status !== 0) throw new Error(`RUN ${args} exited ${run.status}:\n${output.slice(-3000)}`);
    }
  }
  return { workdir, output };
}

/** The exec-form CMD of a stage, e.g. ["node", "…", "dist/server/main.js"]. */
export function stageCommand(stage: Stage): string[] {
  const cmd = stage.instructions.findLast((i) => i.op === 'CMD');
  if (!cmd) throw new Error(`stage ${stage.name} has no CMD`);
  return JSON.parse(cmd.args) as string[];
}

/** ENV key=value pairs of a stage. */
export function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { op, args } of stage.instructions) {
    if (op !== 'ENV') continue;
    for (const m of args.matchAll(/(\w+)=(\S+)/g)) env[m[1]!] = m[2]!;
  }
  return env;
}
