// The session's messages waiting for a turn (sent while one ran; docs/decisions/0097), in the
// order they will run. The list comes from GET …/queue; the session's events say when it
// changes: every input.queued or input.dequeued reloads it, and a message named by an
// input.dequeued leaves at once (before the reload answers), so a message whose turn has
// started never shows beside its own reply. The two events may be stored in either order
// (decision 0097), so "gone" is a set, not a count.
import { useCallback, useEffect, useMemo, useRef, useState } from '../vendor/preact-htm.js';
import { api } from './api.js';
import { humanError } from './errors.js';

/** From the events: how many queue events there are (the list's reload key) and the queued ids that left. */
export function queueMarks(events) {
  let changes = 0;
  const gone = new Set();
  for (const e of events) {
    if (e.type === 'input.queued') changes++;
    else if (e.type === 'input.dequeued') {
      changes++;
      gone.add(e.data?.queued_id);
    }
  }
  return { changes, gone };
}

/** `{queued, changes, error, cancel(id)}`: the waiting messages in run order, and a cancel that reloads. */
export function useQueuedMessages(sessionId, events) {
  const marks = useMemo(() => queueMarks(events), [events]);
  const [list, setList] = useState([]);
  const [error, setError] = useState('');
  // Answers can overtake each other: only the newest request's is shown.
  const latest = useRef(0);
  const reload = useCallback(() => {
    const n = ++latest.current;
    api('GET', `/v1/sessions/${sessionId}/queue`).then(
      (page) => n === latest.current && (setList(page.data), setError('')),
      (err) => n === latest.current && setError(`Queued messages not loaded: ${humanError(err, { notFound: 'This session' })}`),
    );
  }, [sessionId]);
  useEffect(reload, [reload, marks.changes]);

  const cancel = async (id) => {
    setError('');
    try {
      await api('DELETE', `/v1/sessions/${sessionId}/queue/${id}`);
      setList((prev) => prev.filter((q) => q.id !== id));
    } catch (err) {
      setError(`Not cancelled: ${humanError(err, { notFound: 'That queued message' })}`);
    }
    reload();
  };

  return { queued: list.filter((q) => !marks.gone.has(q.id)), changes: marks.changes, error, cancel };
}
