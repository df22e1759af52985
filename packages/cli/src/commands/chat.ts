import { createInterface, type Interface } from 'node:readline/promises';
import { messageText, type AgentSessionClient, type SessionEvent, type ToolCall, type TurnResult } from '@agent-session-service/client';
import type { Command } from 'commander';
import { clientFor } from '../context.js';
import { startSpinner, style, type GlobalOptions } from '../output.js';
import { onBusyOf, ON_BUSY_HELP, type OnBusy } from '../on-busy.js';
import { readStdin } from '../stdin.js';

const out = (text: string) => process.stdout.write(text);

/**
 * `chat <session>`: interactive (a prompt per message), or one turn per `-m`, or standard input as
 * one message when it is not a terminal. Replies stream as they arrive with thinking (dim) and
 * tool calls; Ctrl-C cancels the running turn (a second one exits).
 */
export function chatCommand(program: Command): void {
  program
    .command('chat <session>')
    .description('chat with a session: streams the reply, shows thinking and tool calls; Ctrl-C cancels the turn')
    .option('-m, --message <text...>', 'send these messages, one turn each, then exit')
    .option('-y, --yes', 'approve every tool call that asks for approval (without it -m leaves such a turn waiting)')
    .option('--on-busy <policy>', ON_BUSY_HELP, 'reject')
    .action(async (sessionId: string, opts: { message?: string[]; yes?: boolean; onBusy: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const client = clientFor(g);
      const chat = createChat(client, sessionId, !!g.json, !!opts.yes, onBusyOf(opts.onBusy));
      const messages = opts.message ?? (process.stdin.isTTY ? undefined : [await readStdin()]);
      if (messages) {
        let code = 0;
        for (const text of messages) code = exitCode(await chat.turn(text, null));
        process.exitCode = code;
        return;
      }
      await chat.interactive();
    });
}

function exitCode(result: TurnResult): number {
  return result.status === 'failed' ? 1 : result.status === 'cancelled' ? 130 : 0;
}

function createChat(client: AgentSessionClient, sessionId: string, json: boolean, approveAll: boolean, onBusy: OnBusy) {
  let running = false;
  let cancelling = false;
  const onInterrupt = () => {
    if (!running) process.exit(130);
    if (cancelling) process.exit(130);
    cancelling = true;
    process.stderr.write(`\n${style('yellow', 'cancelling the turn… (Ctrl-C again to quit)')}\n`);
    client.sessions.cancel(sessionId).catch((err: Error) => process.stderr.write(`cancel failed: ${err.message}\n`));
  };
  process.on('SIGINT', onInterrupt);

  async function turn(text: string, rl: Interface | null): Promise<TurnResult> {
    running = true;
    cancelling = false;
    const spinner = startSpinner('waiting for the agent', json);
    const render = renderer(json, () => spinner.stop());
    try {
      const result = await client.sessions.sendAndWait(sessionId, text, {
        onBusy,
        onEvent: render,
        tools: (call) => answerTool(call, rl),
        ...(approveAll ? { approve: () => true } : rl ? { approve: (call: ToolCall) => askApproval(call, rl) } : {}),
      });
      if (!json && result.status === 'waiting_for_tool_results') process.stderr.write('the turn waits for client tool results\n');
      if (!json && result.status === 'waiting_for_approval')
        process.stderr.write(
          `the turn waits for approval of ${result.pendingApprovals?.map((c) => c.name).join(', ')} (chat -y approves)\n`,
        );
      return result;
    } finally {
      spinner.stop();
      running = false;
    }
  }

  async function interactive(): Promise<void> {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    rl.on('SIGINT', onInterrupt);
    process.stderr.write(style('dim', `chatting with session ${sessionId}; /exit to quit, Ctrl-C cancels a running turn\n`));
    for (;;) {
      let line: string;
      try {
        line = (await rl.question(style('bold', 'you> '))).trim();
      } catch {
        break;
      }
      if (line === '/exit' || line === '/quit') break;
      if (!line) continue;
      await turn(line, rl).catch((err: Error) => process.stderr.write(`${style('red', err.message)}\n`));
    }
    rl.close();
  }

  return { turn, interactive };
}

/** A call that waits for approval: y approves; anything else denies (a longer answer is the reason the LLM sees). */
async function askApproval(call: ToolCall, rl: Interface): Promise<boolean | string> {
  const answer = (await rl.question(style('yellow', `approve ${call.name}(${JSON.stringify(call.arguments)})? [y/N] `))).trim();
  if (/^y(es)?$/i.test(answer)) return true;
  return /^n(o)?$/i.test(answer) || answer === '' ? 'denied at the terminal' : answer;
}

/** A client tool call: asks on the terminal, or answers with an error when there is none. */
async function answerTool(call: ToolCall, rl: Interface | null): Promise<unknown> {
  if (!rl) throw new Error(`the CLI has no handler for client tool ${call.name}`);
  const answer = await rl.question(style('yellow', `tool ${call.name}(${JSON.stringify(call.arguments)}) result> `));
  try {
    return JSON.parse(answer);
  } catch {
    return answer;
  }
}

/** Prints a turn's events as they arrive (or one JSON line each with --json). */
function renderer(json: boolean, firstOutput: () => void): (e: SessionEvent) => void {
  let streamed = '';
  let thinking = false;
  return (e) => {
    if (e.type !== 'input.message' && e.type !== 'turn.started' && e.type !== 'session.activated') firstOutput();
    if (json) return void out(JSON.stringify(e) + '\n');
    switch (e.type) {
      case 'reason.thinking.delta':
        if (!thinking) out(style('dim', 'thinking: '));
        thinking = true;
        return void out(style('dim', e.data.delta));
      case 'reason.thinking.completed':
        thinking = false;
        return void out('\n');
      case 'output.message.delta':
        streamed += e.data.delta;
        return void out(e.data.delta);
      case 'output.message.completed': {
        // The final text wins (spec 6.1); a cancelled step's notice follows its partial text.
        const text = messageText(e.data.message);
        if (text.startsWith(streamed)) out(text.slice(streamed.length));
        else out(`${streamed ? '\n' : ''}${text}`);
        if (text || streamed) out('\n');
        streamed = '';
        return;
      }
      case 'tool.started':
        return void out(style('cyan', `→ ${e.data.tool_call.name}(${JSON.stringify(e.data.tool_call.arguments ?? {})})`) + '\n');
      case 'tool.completed':
        return void out(
          (e.data.success ? style('green', `✓ ${e.data.tool_name}`) : style('red', `✗ ${e.data.tool_name}: ${e.data.error ?? 'error'}`)) +
            '\n',
        );
      case 'tool.call_requested':
        return void out(style('yellow', `? client tool ${e.data.tool_calls.map((c) => c.name).join(', ')}`) + '\n');
      case 'tool.approval_requested':
        return void out(style('yellow', `? approval for ${e.data.tool_calls.map((c) => c.name).join(', ')}`) + '\n');
      case 'turn.failed':
        return void process.stderr.write(style('red', `turn failed (${e.data.error_code}): ${e.data.error}`) + '\n');
      case 'turn.cancelled':
        return void process.stderr.write(style('yellow', 'turn cancelled') + '\n');
      default:
        return;
    }
  };
}
