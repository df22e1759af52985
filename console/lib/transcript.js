// Folds a session's events into what the chat view shows: user messages, agent replies (text
// and thinking, streaming until completed), tool calls with their results, client tool calls
// waiting for an answer, turn notices, compactions (their summary), and each finished turn's time,
// tokens and model. A pure function of the event list.

export function foldTranscript(events) {
  const items = [];
  const tools = new Map();
  let reply = null;
  let running = false;
  let usage = newUsage();

  const toolItem = (id, name, args) => {
    let t = tools.get(id);
    if (!t) {
      t = { kind: 'tool', id, name, args, status: 'requested', client: false, result: null };
      tools.set(id, t);
      items.push(t);
    }
    if (name) t.name = name;
    if (args !== undefined) t.args = args;
    return t;
  };

  for (const e of events) {
    const d = e.data ?? {};
    switch (e.type) {
      case 'input.message':
        items.push({ kind: 'user', id: e.id, text: textOf(d.message?.content) });
        break;
      case 'turn.started':
        running = true;
        break;
      case 'output.message.started':
        reply = { kind: 'agent', id: e.id, text: '', thinking: '', streaming: true };
        items.push(reply);
        break;
      case 'reason.thinking.delta':
        if (reply) reply.thinking += d.delta ?? '';
        break;
      case 'output.message.delta':
        if (reply) reply.text += d.delta ?? '';
        break;
      case 'output.message.completed': {
        const content = d.message?.content ?? [];
        addUsage(usage, d);
        if (reply) {
          reply.text = textOf(content) || reply.text;
          reply.thinking = d.message?.thinking ?? reply.thinking;
          reply.streaming = false;
        }
        for (const part of content) if (part.type === 'tool_call') toolItem(part.id, part.name, part.arguments);
        reply = null;
        break;
      }
      case 'tool.call_requested':
        for (const c of d.tool_calls ?? []) Object.assign(toolItem(c.id, c.name, c.arguments), { client: true, status: 'waiting' });
        break;
      case 'tool.approval_requested':
        for (const c of d.tool_calls ?? []) Object.assign(toolItem(c.id, c.name, c.arguments), { approval: true, status: 'waiting' });
        break;
      case 'tool.approval_decided': {
        const t = toolItem(d.tool_call_id, d.tool_name);
        if (t.status === 'waiting') t.status = d.approved ? 'approved' : 'denied';
        break;
      }
      case 'tool.started':
        if (d.tool_call) toolItem(d.tool_call.id, d.tool_call.name, d.tool_call.arguments).status = 'running';
        break;
      case 'tool.completed': {
        const t = toolItem(d.tool_call_id, d.tool_name);
        t.status = d.success ? 'success' : 'error';
        t.result = d.success ? resultText(d.result) : resultText(d.error ?? d.result);
        break;
      }
      case 'session.compacted':
        addUsage(usage, d);
        items.push({
          kind: 'compacted',
          id: e.id,
          summary: d.summary ?? '',
          reason: d.reason ?? '',
          tokensBefore: d.tokens_before ?? null,
          tokensAfter: d.tokens_after ?? null,
        });
        break;
      case 'turn.completed':
        running = false;
        if (reply) reply.streaming = false;
        items.push({ kind: 'turn', id: e.id, durationMs: d.duration_ms ?? null, iterations: d.iterations ?? null, ...usage });
        usage = newUsage();
        break;
      case 'turn.failed':
      case 'turn.cancelled':
        running = false;
        if (reply) reply.streaming = false;
        reply = null;
        items.push({ kind: 'notice', id: e.id, text: e.type === 'turn.failed' ? `Turn failed: ${errorText(d.error)}` : 'Turn cancelled' });
        for (const t of tools.values()) if (t.status === 'waiting' || t.status === 'running' || t.status === 'requested') t.status = 'cancelled';
        usage = newUsage();
        break;
    }
  }
  const waiting = [...tools.values()].filter((t) => t.client && t.status === 'waiting');
  const approvals = [...tools.values()].filter((t) => t.approval && t.status === 'waiting');
  return { items, running, waiting, approvals };
}

function newUsage() {
  return { inputTokens: 0, outputTokens: 0, model: null };
}

/** Adds one model reply's token counts (and names its model) to the turn's totals. */
function addUsage(usage, d) {
  const u = d.usage ?? d.metadata?.usage ?? {};
  usage.inputTokens += Number(u.input_tokens) || 0;
  usage.outputTokens += Number(u.output_tokens) || 0;
  usage.model = d.metadata?.model ?? d.model ?? usage.model;
}

/** "1.2 s · 120 in / 45 out tokens · llmsim" for a finished turn. */
export function turnSummary(turn) {
  const parts = [];
  if (turn.durationMs !== null) parts.push(turn.durationMs < 1000 ? `${turn.durationMs} ms` : `${(turn.durationMs / 1000).toFixed(1)} s`);
  if (turn.inputTokens || turn.outputTokens) parts.push(`${turn.inputTokens} in / ${turn.outputTokens} out tokens`);
  if (turn.model) parts.push(turn.model);
  return parts.join(' · ');
}

/** The text parts of a message's content, joined. */
export function textOf(content) {
  if (!Array.isArray(content)) return '';
  return content.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
}

function resultText(result) {
  if (result === undefined || result === null) return '';
  if (typeof result === 'string') return result;
  if (Array.isArray(result) && result.every((p) => p?.type === 'text')) return result.map((p) => p.text).join('\n');
  return JSON.stringify(result, null, 2);
}

function errorText(error) {
  if (!error) return 'unknown error';
  if (typeof error === 'string') return error;
  return error.message ?? JSON.stringify(error);
}
