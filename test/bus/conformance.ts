import { after, before, describe, test, type TestContext } from 'node:test';
import type { Bus, LoggedEvent } from '../../src/bus/index.js';
import { defineEventLogCases } from './conformance-events.js';
import { defineSignalCases, defineTurnQueueCases } from './conformance-turns.js';

/** One backend (a store, a nats-server) that hands out any number of bus clients. */
export interface BusHarness {
  /** A new bus client on the shared backend; the harness closes it. */
  connect(): Promise<Bus<LoggedEvent>>;
  /** Turn lease (local) or ack wait (nats) configured for every client, in ms. */
  leaseMs: number;
  /** Env that lets test/bus/append-child.ts reach the same backend from another process. */
  childEnv?: Record<string, string>;
  close(): Promise<void>;
}

export interface BusConformanceOptions {
  name: string;
  create: () => Promise<BusHarness>;
  /** Cases this adapter cannot run, by exact test name, with the reason (shown as the skip message). */
  skip?: { cases: string[]; reason: string };
}

/** What the case files get: the shared harness and bus of the suite plus a test() that honours skips. */
export interface ConformanceContext {
  readonly harness: BusHarness;
  readonly bus: Bus<LoggedEvent>;
  it(name: string, fn: (t: TestContext) => Promise<void>): void;
}

/** Exact names of cases an adapter may skip. */
export const CASES = {
  multiProcessAppend: '2 processes × concurrent appends to one session - contiguous sequence, no gaps or duplicates',
} as const;

/**
 * The bus port contract, run against one adapter. Every case uses fresh random session ids
 * and leaves the turn queue empty, so the cases share one backend (a PGlite store takes
 * seconds to open) and run in order.
 */
export function runBusConformance({ name, create, skip }: BusConformanceOptions): void {
  describe(`bus conformance: ${name}`, () => {
    let harness: BusHarness | undefined;
    let bus: Bus<LoggedEvent> | undefined;
    before(async () => {
      harness = await create();
      bus = await harness.connect();
    });
    after(async () => {
      await harness?.close();
    });
    const ctx: ConformanceContext = {
      get harness() {
        return harness!;
      },
      get bus() {
        return bus!;
      },
      it(caseName, fn) {
        const skipped = skip?.cases.includes(caseName) ? skip.reason : false;
        test(caseName, { skip: skipped }, fn);
      },
    };
    defineEventLogCases(ctx);
    defineTurnQueueCases(ctx);
    defineSignalCases(ctx);
  });
}
