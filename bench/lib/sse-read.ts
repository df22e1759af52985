import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * Reads an SSE response body to its end, handing each message to `onEvent`; rejects when the
 * stream breaks (an abort among the reasons), so each caller says what a broken stream means.
 */
export async function readSse(res: Response, onEvent: (m: EventSourceMessage) => void): Promise<void> {
  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
}
