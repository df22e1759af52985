/**
 * Preloaded into a benchmarked service to count the NATS messages it sends and receives, by
 * subject shape (ids, inbox tokens and numbers folded), JetStream API requests also by the keys
 * of their JSON body (`last_by_subj`, `seq`, …) and replies carrying a JetStream error by its code:
 *
 *   run.ts … --node-option=--import=<abs path>/bench/real-path/nats-counter.ts --env BENCH_NATS_LOG=/tmp/nats.json
 *
 * Counted on nats.js's protocol handler, below every client API (core publish and request,
 * JetStream publish, KV, consumers, acks), so nothing the service sends is missed. Every 10 s and
 * at exit the counts so far go to $BENCH_NATS_LOG (JSON, most frequent first); divided by the conversations
 * of the run they give NATS operations per conversation, the figure the bus cuts aim at.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

interface Handler {
  publish(subject: string, payload?: unknown, options?: { reply?: string; headers?: unknown }): void;
  processMsg(msg: { subject: Uint8Array; hdr: number }, data: Uint8Array): void;
}

const file = process.env['BENCH_NATS_LOG'];
// The service resolves nats.js from its own node_modules; so does this preload (same checkout).
const core = createRequire(`${process.cwd()}/package.json`)('@nats-io/nats-core/internal') as { ProtocolHandler: { prototype: Handler } };

const counts = new Map<string, number>();
/** Reply subject → what asked (a request's or acked publish's counting key), until its answer comes. */
const asked = new Map<string, string>();
const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
const td = new TextDecoder();
const shape = (subject: string) =>
  subject
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/^_INBOX\..*/, '_INBOX')
    .replace(/\b\d+\b/g, 'N');

/** With BENCH_NATS_CALLERS=1 each outbound key also names the service's nearest functions that sent it (slower). */
const withCallers = process.env['BENCH_NATS_CALLERS'] === '1';
const ownSource = `${process.cwd()}/src/`;
function callers(): string {
  const frames = (new Error().stack ?? '').split('\n').filter((l) => l.includes(ownSource));
  return frames
    .slice(0, 3)
    .map((l) => /at (?:async )?([^ ]+) \(.*\/src\/([^:]+)/.exec(l)?.slice(1, 3).join(' ') ?? '?')
    .join(' ← ');
}

if (file) {
  Error.stackTraceLimit = Math.max(Error.stackTraceLimit, 30);
  const proto = core.ProtocolHandler.prototype;
  const publish = proto.publish;
  proto.publish = function (this: Handler, subject, payload, options) {
    let key = `out ${shape(subject)}${options?.reply ? ' (reply wanted)' : ''}`;
    if (subject.startsWith('$JS.API.') && payload !== undefined) {
      const text = typeof payload === 'string' ? payload : td.decode(payload as Uint8Array);
      try {
        key += ` {${Object.keys(JSON.parse(text || '{}') as object).join(',')}}`;
      } catch {
        // not JSON: the subject alone
      }
    }
    if (withCallers) key += ` ← ${callers()}`;
    count(key);
    if (options?.reply?.startsWith('_INBOX.')) asked.set(options.reply, key.slice(4));
    return publish.call(this, subject, payload, options);
  };
  const processMsg = proto.processMsg;
  proto.processMsg = function (this: Handler, msg, data) {
    const subject = td.decode(msg.subject);
    const request = asked.get(subject);
    if (request !== undefined) asked.delete(subject);
    let key = request === undefined ? `in ${shape(subject)}` : `in reply to ${request}`;
    const head = td.decode(data.subarray(Math.max(0, msg.hdr), Math.max(0, msg.hdr) + 160));
    const code = /"error":\{[^}]*?"code":(\d+)/.exec(head)?.[1];
    if (code) key += ` error ${code}`;
    if (msg.hdr > 0) {
      const status = /^NATS\/1\.0 (\d+)/.exec(td.decode(data.subarray(0, Math.min(msg.hdr, 40))))?.[1];
      if (status) key += ` status ${status}`;
    }
    count(key);
    return processMsg.call(this, msg, data);
  };
  const write = () =>
    writeFileSync(
      file,
      `${JSON.stringify(
        [...counts].sort((a, b) => b[1] - a[1]),
        null,
        1,
      )}\n`,
    );
  setInterval(write, 10_000).unref();
  // The last write at exit covers every conversation, those still running at the last interval too.
  process.on('exit', write);
}
