// A session's conversation: replies stream in as deltas, thinking and tool calls with their
// results are shown, client tool calls wait for an answer here, and a running turn can be
// cancelled. While a turn runs, a message can be queued (it runs after the turn) or interrupt it
// (the turn is cancelled and the message runs next); queued messages wait above the composer,
// where they can be cancelled (lib/queued.js). Built from the session's events
// (lib/session-feed.js), so a reload replays the history and resumes the stream from the last
// event. The page follows a streaming reply while
// the reader is at the bottom; the composer (sticky at the bottom) carries the send errors, so
// they show where the reader looks.
import { html, useEffect, useMemo, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { FeedStatus } from '../lib/feed-status.js';
import { useFollowBottom } from '../lib/follow.js';
import { useQueuedMessages } from '../lib/queued.js';
import { openSessionFeed } from '../lib/session-feed.js';
import { foldTranscript, turnSummary } from '../lib/transcript.js';
import { ErrorLine, useResource } from '../lib/ui.js';
import { QueuedMessages } from './queued-messages.js';
import { SessionList } from './session-list.js';
import { SessionNav, sessionMissing, useSession } from './session-nav.js';

export function Chat({ sessionId }) {
  const session = useSession(sessionId);
  const [events, setEvents] = useState([]);
  const [feed, setFeed] = useState({ state: 'loading' });

  useEffect(() => {
    const f = openSessionFeed(sessionId, { onEvents: (batch) => setEvents((prev) => [...prev, ...batch]), onState: setFeed });
    return () => f.close();
  }, [sessionId]);

  const view = useMemo(() => foldTranscript(events), [events]);
  const queue = useQueuedMessages(sessionId, events);
  // The queue sits in the sticky composer: when it grows, the newest message must stay above it.
  const follow = useFollowBottom(`${events.length}:${view.waiting.length}:${queue.queued.length}`);
  const missing = sessionMissing(session) || feed.state === 'not_found';

  return html`
    <div class="with-sidebar">
      <${SessionList} current=${sessionId} refresh=${queue.changes} />
      <section class="chat">
        <${SessionNav} sessionId=${sessionId} current="chat" session=${session} />
        ${!missing && html`
          <p class="muted">Stream: <${FeedStatus} feed=${feed} /> · ${events.length} events</p>
          ${feed.state === 'loading' && events.length === 0 && html`<p class="loading" role="status">Loading the conversation…</p>`}
          <ol class="transcript" data-testid="transcript" aria-label="Conversation">
            ${view.items.map((item) => html`<${Item} key=${item.kind + item.id} item=${item} />`)}
          </ol>
          ${view.waiting.map((t) => html`<${ClientToolPrompt} key=${t.id} sessionId=${sessionId} tool=${t} />`)}
          ${view.approvals.map((t) => html`<${ApprovalPrompt} key=${t.id} sessionId=${sessionId} tool=${t} />`)}
          <${Composer} sessionId=${sessionId} running=${view.running} waiting=${view.waiting.length + view.approvals.length > 0} follow=${follow} queue=${queue} />`}
      </section>
    </div>
  `;
}

/**
 * The message box. Idle: Send (as `enqueue`, so a turn that began meanwhile queues it instead of
 * refusing it). While a turn runs or waits: Queue, or Interrupt (cancel the turn, run this next).
 */
function Composer({ sessionId, running, waiting, follow, queue }) {
  const models = useResource(() => api('GET', '/v1/llm-models', { query: { enabled: true } }));
  const [text, setText] = useState('');
  const [modelId, setModelId] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const choices = (models.data?.data ?? []).filter((m) => m.enabled !== false);

  const occupied = running || waiting;

  const sendAs = async (onBusy) => {
    if (!text.trim() || busy) return;
    setError('');
    setBusy(true);
    try {
      const message = { content: [{ type: 'text', text }], ...(modelId ? { controls: { model_id: modelId } } : {}) };
      await api('POST', `/v1/sessions/${sessionId}/messages`, { body: { message, on_busy: onBusy } });
      setText('');
      follow.jump();
    } catch (err) {
      setError(`Not sent: ${humanError(err, { notFound: 'This session or model' })}`);
    } finally {
      setBusy(false);
    }
  };
  const send = (e) => {
    e.preventDefault();
    sendAs('enqueue');
  };
  const cancel = () => api('POST', `/v1/sessions/${sessionId}/cancel`).catch((err) => setError(`Not cancelled: ${humanError(err)}`));
  // A compaction runs as a turn of its own: the feed shows it, and Cancel turn stops it.
  const compact = () => {
    setError('');
    api('POST', `/v1/sessions/${sessionId}/compact`, { body: {} }).catch((err) => setError(`Not compacted: ${humanError(err)}`));
  };
  const onKey = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(e);
  };

  return html`
    <form class="composer" onSubmit=${send} data-testid="composer">
      <${QueuedMessages} queue=${queue} />
      ${!follow.following && html`<button type="button" class="secondary jump" onClick=${follow.jump}>↓ Newest</button>`}
      <${ErrorLine} error=${error} />
      <label class="visually-hidden" for="composer-text">Message</label>
      <textarea id="composer-text" name="text" rows="3" placeholder=${occupied ? 'Message (Ctrl+Enter queues it)' : 'Message (Ctrl+Enter sends)'} value=${text} onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKey}></textarea>
      <div class="bar">
        ${occupied
          ? html`
            <button type="button" data-on-busy="enqueue" disabled=${busy} onClick=${() => sendAs('enqueue')} title="Runs after the current turn">Queue</button>
            <button type="button" class="secondary" data-on-busy="interrupt" disabled=${busy} onClick=${() => sendAs('interrupt')} title="Cancels the current turn, then runs">Interrupt</button>`
          : html`<button type="submit" disabled=${busy}>Send</button>`}
        ${choices.length > 0 && html`
          <label class="inline">Model
            <select name="model_id" value=${modelId} onChange=${(e) => setModelId(e.currentTarget.value)}>
              <option value="">session default</option>
              ${choices.map((m) => html`<option key=${m.id} value=${m.id}>${m.display_name || m.model_id}</option>`)}
            </select>
          </label>`}
        ${!running && !waiting && html`<button type="button" class="secondary" onClick=${compact} title="Summarise the history so later turns send less">Compact</button>`}
        ${running && html`<button type="button" class="danger" onClick=${cancel}>Cancel turn</button>`}
        ${running && html`<span class="muted" role="status" data-testid="turn-state">${waiting ? 'waiting for your answer' : 'working…'}</span>`}
      </div>
    </form>
  `;
}

function Item({ item }) {
  switch (item.kind) {
    case 'user':
      return html`<li class="msg user" data-event-id=${item.id}><pre>${item.text}</pre></li>`;
    case 'agent':
      if (!item.text && !item.thinking && !item.streaming) return null; // a step that only called tools
      return html`
        <li class="msg agent" data-event-id=${item.id} data-streaming=${String(item.streaming)}>
          ${item.thinking && html`<details class="thinking" open=${item.streaming}><summary>Thinking</summary><pre>${item.thinking}</pre></details>`}
          ${item.text && html`<pre class="reply">${item.text}</pre>`}
          ${item.streaming && html`<span class="cursor" aria-hidden="true">▍</span>`}
        </li>`;
    case 'tool':
      return html`
        <li class=${`tool ${item.status}`} data-tool-call-id=${item.id} data-tool-name=${item.name} data-status=${item.status}>
          <details open=${item.status === 'waiting'}>
            <summary><span class="badge">${item.client ? 'client tool' : 'tool'}</span> <code>${item.name}</code> <span class="status">${item.status}</span></summary>
            <pre class="args">${JSON.stringify(item.args ?? {}, null, 2)}</pre>
            ${item.result && html`<pre class="result">${item.result}</pre>`}
          </details>
        </li>`;
    case 'turn':
      return html`<li class="turn-stats muted" data-turn-stats=${item.id}>${turnSummary(item)}</li>`;
    case 'compacted':
      return html`
        <li class="compacted" data-testid="compacted" data-event-id=${item.id}>
          <details>
            <summary>History compacted${item.reason === 'manual' ? '' : ` (${item.reason})`}: ${item.tokensBefore} → ${item.tokensAfter} tokens</summary>
            <pre class="summary">${item.summary}</pre>
          </details>
        </li>`;
    default:
      return html`<li class="notice" data-event-id=${item.id}>${item.text}</li>`;
  }
}

/** A tool call that waits for a person (decision 0101): approve, or deny with a reason the LLM sees. */
function ApprovalPrompt({ sessionId, tool }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const decide = async (approved) => {
    setBusy(true);
    setError('');
    const decision = { tool_call_id: tool.id, approved, ...(!approved && reason ? { reason } : {}) };
    await api('POST', `/v1/sessions/${sessionId}/approvals`, { body: { approvals: [decision] } }).catch((err) => setError(humanError(err)));
    setBusy(false);
  };
  return html`
    <div class="card approval" data-testid="approval-prompt" data-tool-call-id=${tool.id}>
      <p>The agent wants to run <code>${tool.name}</code> with:</p>
      <pre>${JSON.stringify(tool.args ?? {}, null, 2)}</pre>
      <label>Reason if denied (the agent sees it) <input value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} /></label>
      <${ErrorLine} error=${error} />
      <div class="bar">
        <button disabled=${busy} onClick=${() => decide(true)}>Approve</button>
        <button class="danger" disabled=${busy} onClick=${() => decide(false)}>Deny</button>
      </div>
    </div>
  `;
}

/** A client tool call the model is waiting on: the user answers with a result or an error. */
function ClientToolPrompt({ sessionId, tool }) {
  const [answer, setAnswer] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const submit = async (asError) => {
    setBusy(true);
    setError('');
    let value = answer;
    try {
      value = JSON.parse(answer);
    } catch {
      // plain text is a fine result too
    }
    const result = asError ? { tool_call_id: tool.id, error: answer || 'declined' } : { tool_call_id: tool.id, result: value };
    await api('POST', `/v1/sessions/${sessionId}/tool-results`, { body: { tool_results: [result] } }).catch((err) => setError(humanError(err)));
    setBusy(false);
  };
  return html`
    <div class="card client-tool" data-testid="client-tool-prompt" data-tool-call-id=${tool.id}>
      <p>The agent calls the client tool <code>${tool.name}</code> with:</p>
      <pre>${JSON.stringify(tool.args ?? {}, null, 2)}</pre>
      <label>Result (JSON or text) <textarea rows="3" value=${answer} onInput=${(e) => setAnswer(e.currentTarget.value)}></textarea></label>
      <${ErrorLine} error=${error} />
      <div class="bar">
        <button disabled=${busy} onClick=${() => submit(false)}>Send result</button>
        <button class="secondary" disabled=${busy} onClick=${() => submit(true)}>Send as error</button>
      </div>
    </div>
  `;
}
