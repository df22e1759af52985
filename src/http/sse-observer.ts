/** SSE stream events, per instance. */
export interface SseObserver {
  opened(): void;
  /** One chunk (a frame, or a heartbeat) handed to the socket. */
  written(chunk: string): void;
  /** The stream ended with `disconnecting` for its connection cycle. */
  cycled(): void;
  /** The client fell more than SSE_MAX_BUFFER_BYTES behind and was disconnected. */
  dropped(): void;
}
