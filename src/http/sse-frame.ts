const LINE_BREAK = /[\r\n]/;

/** One SSE frame; every event is serialised once by this function and shared by all clients. */
export function formatSseFrame({ id, event, data }: { id?: string; event: string; data: string }): string {
  if (/[\r\n]/.test(event) || (id !== undefined && /[\r\n]/.test(id))) throw new Error('SSE id/event must not contain CR or LF');
  // JSON text (every event) has no line breaks: one data line, without splitting into arrays.
  const lines = LINE_BREAK.test(data)
    ? data
        .split(/\r\n|\r|\n/)
        .map((l) => `data: ${l}\n`)
        .join('')
    : `data: ${data}\n`;
  return (id !== undefined ? `id: ${id}\n` : '') + `event: ${event}\n` + lines + '\n';
}

export const SSE_HEARTBEAT = ': heartbeat\n\n';
