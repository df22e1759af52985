/**
 * The work bench/sse-scale streams: turns on the LLM simulator (`@tokens`), posted to a random
 * instance (no affinity), one after another per active session; and the audit's reference,
 * each session's last logged sequence.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface TurnDriver {
  /** Turns posted (201) so far. */
  posted(): number;
  /** Stops posting and waits until the running turns had time to end. */
  stop(drainMs: number): Promise<void>;
}

async function request(method: string, url: string, key: string, body?: unknown): Promise<{ status: number; json: any }> {
  try {
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  } catch {
    return { status: 0, json: undefined };
  }
}

/** Creates one agent and `n` sessions, `concurrency` at a time, spread over the instances. */
export async function createSessions(bases: string[], key: string, n: number, log: (m: string) => void): Promise<string[]> {
  const agent = await request('POST', `${bases[0]}/v1/agents`, key, { name: 'sse-scale', system_prompt: 'You stream filler tokens.' });
  if (agent.status !== 201) throw new Error(`creating the agent: ${agent.status} ${JSON.stringify(agent.json)}`);
  const ids: string[] = new Array(n);
  let next = 0;
  let lastLog = Date.now();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      for (let attempt = 0; ; attempt++) {
        const r = await request('POST', `${bases[i % bases.length]}/v1/sessions`, key, { agent_id: agent.json.id });
        if (r.status === 201) {
          ids[i] = r.json.id as string;
          break;
        }
        if (attempt >= 5) throw new Error(`creating session ${i}: ${r.status} ${JSON.stringify(r.json)}`);
        await sleep(200);
      }
      if (Date.now() - lastLog > 5000) {
        lastLog = Date.now();
        log(`  sessions: ${next}/${n}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return ids;
}

/**
 * Each active session posts `text`, waits `gapMs` (the turn runs meanwhile) and posts again; a
 * 409 (the previous turn still holds the session) waits and retries.
 */
export function driveTurns(bases: string[], key: string, sessions: string[], text: string, gapMs: number): TurnDriver {
  let stopping = false;
  let posted = 0;
  const loops = sessions.map(async (id, i) => {
    await sleep(Math.random() * gapMs); // spread the starts
    for (let n = i; !stopping; n++) {
      const r = await request('POST', `${bases[n % bases.length]}/v1/sessions/${id}/messages`, key, {
        message: { content: [{ type: 'text', text }] },
      });
      if (r.status === 201) posted++;
      await sleep(r.status === 201 ? gapMs : 500);
    }
  });
  return {
    posted: () => posted,
    async stop(drainMs) {
      stopping = true;
      await Promise.all(loops);
      await sleep(drainMs);
    },
  };
}

/** Each session's last logged sequence (the audit's reference), read `concurrency` at a time. */
export async function lastSequences(bases: string[], key: string, sessions: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < sessions.length) {
      const i = next++;
      const id = sessions[i]!;
      const r = await request('GET', `${bases[i % bases.length]}/v1/sessions/${id}/events?order_desc=true&limit=1`, key);
      const seq = r.json?.data?.[0]?.sequence;
      if (r.status === 200 && typeof seq === 'number') out[id] = seq;
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return out;
}
