/**
 * A peer of bench/real-path (issue 34): another agent server doing the same job (model →
 * get_current_time → model against the same zero-latency fake, a new conversation per turn),
 * installed by the bench itself into bench/.cache/<name> and started at one of its settings.
 */
import type { Proc } from '../../lib/process.js';

export type PeerName = 'langgraph' | 'mastra' | 'mastra-stateless';

export interface PeerStartOptions {
  fakeOrigin: string;
  provider: 'openai' | 'anthropic';
  vendorKey: string;
  port: number;
  /** One of the peer's `settings` (e.g. LangGraph's jobs per worker); '' when it has none. */
  setting: string;
  log: (msg: string) => void;
}

export interface Peer {
  name: PeerName;
  /** Keeps the conversation as our sessions do (the ratios' anchor); false = the stateless floor. */
  keepsConversation: boolean;
  /** What the client drives: the route shape and, for Mastra, the agent. */
  client: { target: 'langgraph' | 'mastra'; agentId?: string };
  /** Providers its app speaks to the fake. */
  providers: readonly ('openai' | 'anthropic')[];
  /** Installs (and builds) on first use; null when ready, else why it cannot run. */
  ensure(log: (msg: string) => void): string | null;
  /** Starts it and waits until it answers; throws with its output when it does not. */
  start(opts: PeerStartOptions): Promise<Proc>;
}
