/**
 * Issue 26's split of a turn's main-thread time: the LLM call (building, measuring and sending
 * the request, reading the vendor's stream) against the rest of the turn (reading the log,
 * folding, appending, fan-out, HTTP), whose cost must not grow with the session (≤ 1.1×). A
 * sample is the LLM call's when a frame on its stack is the vendor SDK's, fetch's (undici, web
 * streams), the stream parser's, the tokenizer's, or one of our request functions below; GC
 * samples are apart (the request's garbage and the rest's are not told apart), and so are the
 * socket writes of the rest (database, NATS): on loopback the kernel bills the receiving side of
 * what was sent last, the vendor request's hundreds of KB included, to whichever write runs
 * next, so their time grows with the request's bytes, not with what the rest writes.
 */
import { type CpuProfile, parentsOf, selfTimes } from '../lib/cpuprofile.js';

/** Our functions that build, measure, send or read an LLM request (the service runs bundled: names, not files). */
const LLM_FUNCTIONS = new Set([
  'chatBody',
  'responsesBody',
  'encodeJsonBody',
  'postStreaming',
  'streamWithRetries',
  'vendorSseItems',
  'openAiStreamItems',
  'mapChatStream',
  'countTokens',
  'countTexts',
  'countPart',
  'requestSize',
  'measure',
  'messagesFor',
]);
/** Node's socket write system calls (native frames, no URL). */
const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']);
const LLM_URL = /\/node_modules\/(openai|eventsource-parser|gpt-tokenizer)\/|undici|webstreams|o200k_base/;

export interface LlmSplit {
  llmMs: number;
  gcMs: number;
  /** The rest's socket writes (see above). */
  writesMs: number;
  restMs: number;
}

export type SampleKind = keyof LlmSplit | 'idle';

/** Which part of the split each of the profile's nodes is in (see above). */
export function sampleKinds(profile: CpuProfile): (id: number) => SampleKind {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = parentsOf(profile);
  const kinds = new Map<number, SampleKind>();
  const kindOf = (id: number): SampleKind => {
    let kind = kinds.get(id);
    if (kind) return kind;
    const { functionName, url } = byId.get(id)!.callFrame;
    if (functionName === '(garbage collector)') kind = 'gcMs';
    else if (functionName === '(idle)') kind = 'idle';
    else if (LLM_FUNCTIONS.has(functionName) || LLM_URL.test(url)) kind = 'llmMs';
    else {
      const up = parent.get(id);
      kind = up === undefined ? 'restMs' : kindOf(up);
      if (kind !== 'llmMs') kind = SOCKET_WRITES.has(functionName) ? 'writesMs' : 'restMs';
    }
    kinds.set(id, kind);
    return kind;
  };
  return kindOf;
}

/** The split of the samples within [from, to] µs on the profile's clock. */
export function llmSplit(profile: CpuProfile, clockUs: [number, number]): LlmSplit {
  const kindOf = sampleKinds(profile);
  const out: LlmSplit = { llmMs: 0, gcMs: 0, writesMs: 0, restMs: 0 };
  for (const [id, us] of selfTimes(profile, { clockUs })) {
    const kind = kindOf(id);
    if (kind !== 'idle') out[kind] += us / 1000;
  }
  return out;
}
