// A session's conversation: replies stream in as deltas, thinking and tool calls with their
// results are shown, client tool calls wait for an answer here, and a running turn can be
// cancelled. Built from the session's events (lib/session-feed.js), so a reload replays the
// history and resumes the stream from the last event.
import { html, useEffect, useMemo, useRef, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { openSessionFeed } from '../lib/session-feed.js';
import { foldTranscript } from '../lib/transcript.js';
import { ErrorLine } from '../lib/ui.js';
import { SessionNav } from './session-nav.js';

export function Chat({ sessionId }) {
  const [events, setEvents] = useState([]);
  const [feedState, setFeedState] = useState('loading');
  const [error, setError] = useState('');
  const [text, setText] = useState('');
  const bottom = useRef(null);

  useEffect(() => {
    const feed = openSessionFeed(sessionId, { onEvents: (batch) => setEvents((prev) => [...prev, ...batch]), onState: setFeedState });
    return () => feed.close();
  }, [sessionId]);

  const { items, running, waiting } = useMemo(() => foldTranscript(events), [events]);
  useEffect(() => bottom.current?.scrollIntoView({ block: 'end' }), [items.length]);

  const send = async (e) => {
    e.preventDefault();
    if (!text.trim()) return;
    setError('');
    try {
      await api('POST', `/v1/sessions/${sessionId}/messages`, { body: { message: { content: [{ type: 'text', text }] } } });
      setText('');
    } catch (err) {
      setError(err.message);
    }
  };
  const cancel = () => api('POST', `/v1/sessions/${sessionId}/cancel`).catch((err) => setError(err.message));
  const onKey = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(e);
  };

  return html`
    <section class="chat">
      <${SessionNav} sessionId=${sessionId} current="chat" />
      <p class="muted">Stream: <span data-testid="feed-state">${feedState}</span> · ${events.length} events</p>
      <ol class="transcript" data-testid="transcript">
        ${items.map((item) => html`<${Item} key=${item.kind + item.id} item=${item} />`)}
      </ol>
      ${waiting.map((t) => html`<${ClientToolPrompt} key=${t.id} sessionId=${sessionId} tool=${t} onError=${setError} />`)}
      <div ref=${bottom}></div>
      <${ErrorLine} error=${error} />
      <form class="composer" onSubmit=${send}>
        <textarea name="text" rows="3" placeholder="Message (Ctrl+Enter sends)" value=${text} onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKey}></textarea>
        <div class="bar">
          <button type="submit" disabled=${running || waiting.length > 0}>Send</button>
          ${running && html`<button type="button" class="danger" onClick=${cancel}>Cancel turn</button>`}
          ${running && html`<span class="muted">working…</span>`}
        </div>
      </form>
    </section>
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
          ${item.streaming && html`<span class="cursor">▍</span>`}
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
    default:
      return html`<li class="notice" data-event-id=${item.id}>${item.text}</li>`;
  }
}

/** A client tool call the model is waiting on: the user answers with a result or an error. */
function ClientToolPrompt({ sessionId, tool, onError }) {
  const [answer, setAnswer] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (asError) => {
    setBusy(true);
    let value = answer;
    try {
      value = JSON.parse(answer);
    } catch {
      // plain text is a fine result too
    }
    const result = asError ? { tool_call_id: tool.id, error: answer || 'declined' } : { tool_call_id: tool.id, result: value };
    await api('POST', `/v1/sessions/${sessionId}/tool-results`, { body: { tool_results: [result] } }).catch((err) => onError(err.message));
    setBusy(false);
  };
  return html`
    <div class="card client-tool" data-testid="client-tool-prompt" data-tool-call-id=${tool.id}>
      <p>The agent calls the client tool <code>${tool.name}</code> with:</p>
      <pre>${JSON.stringify(tool.args ?? {}, null, 2)}</pre>
      <label>Result (JSON or text) <textarea rows="3" value=${answer} onInput=${(e) => setAnswer(e.currentTarget.value)}></textarea></label>
      <div class="bar">
        <button disabled=${busy} onClick=${() => submit(false)}>Send result</button>
        <button class="secondary" disabled=${busy} onClick=${() => submit(true)}>Send as error</button>
      </div>
    </div>
  `;
}
