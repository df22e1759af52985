import { readFileSync, writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { clientFor, UsageError } from '../context.js';
import { printJson, printPage, printTable, withSpinner, type GlobalOptions } from '../output.js';
import { readStdin } from '../stdin.js';

const CONTENT_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.json': 'application/json',
};

/** `agents ls|create|import|export`. */
export function agentsCommand(program: Command): void {
  const agents = program.command('agents').description('list, create, import and export agents');
  agents
    .command('ls')
    .description('list agents')
    .option('--archived', 'include archived agents')
    .action(async (opts: { archived?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const list = await clientFor(g).agents.list(opts.archived ? { include_archived: true } : {});
      if (g.json) printPage(list);
      else printTable(list.data, ['id', 'name', 'status', 'updated_at']);
    });
  agents
    .command('create')
    .description('create an agent')
    .requiredOption('--name <name>', 'agent name')
    .requiredOption('--prompt <text>', 'system prompt')
    .option('--description <text>', 'description')
    .option('--capability <id...>', 'capability ids (current_time, web_fetch, …)')
    .option('--model <id>', 'default model id')
    .action(async (opts: { name: string; prompt: string; description?: string; capability?: string[]; model?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const agent = await clientFor(g).agents.create({
        name: opts.name,
        system_prompt: opts.prompt,
        ...(opts.description ? { description: opts.description } : {}),
        ...(opts.capability ? { capabilities: opts.capability } : {}),
        ...(opts.model ? { default_model_id: opts.model } : {}),
      });
      if (g.json) printJson(agent);
      else process.stdout.write(`${agent.id}\n`);
    });
  agents
    .command('import [file]')
    .description('create an agent from a Markdown (YAML front matter), YAML or JSON file ("-" for stdin), or from an example')
    .option('--example <name>', 'an example agent of the service (GET /v1/agent-examples)')
    .option('--content-type <type>', 'content type of the file (default: from its extension, else text/markdown)')
    .action(async (file: string | undefined, opts: { example?: string; contentType?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const client = clientFor(g);
      if (!file && !opts.example) throw new UsageError('give a file, "-" for stdin, or --example <name>');
      const agent = await withSpinner(
        'importing',
        async () => {
          if (opts.example) return client.agents.importExample(opts.example);
          const text = file === '-' ? await readStdin() : readFileSync(file!, 'utf8');
          return client.agents.import(text, opts.contentType ?? CONTENT_TYPES[extname(file ?? '').toLowerCase()] ?? 'text/markdown');
        },
        g.json,
      );
      if (g.json) printJson(agent);
      else process.stdout.write(`${agent.id}\n`);
    });
  agents
    .command('export <id>')
    .description('print an agent as Markdown with YAML front matter (imports back equal)')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (id: string, opts: { output?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const markdown = await clientFor(g).agents.export(id);
      if (opts.output) writeFileSync(opts.output, markdown);
      else if (g.json) printJson({ id, markdown });
      else process.stdout.write(markdown);
    });
}
