import { UsageError } from './context.js';

/** What a message does while a turn runs (POST …/messages `on_busy`; docs/operations.md section 34). */
export const ON_BUSY = ['reject', 'enqueue', 'interrupt'] as const;
export type OnBusy = (typeof ON_BUSY)[number];

export const ON_BUSY_HELP = 'while a turn runs: reject (default, the service answers 409), enqueue (wait for it) or interrupt (cancel it)';

/** `--on-busy` checked: a usage error (exit 2) for anything else. */
export function onBusyOf(text: string): OnBusy {
  if (!ON_BUSY.includes(text as OnBusy)) throw new UsageError(`--on-busy must be one of ${ON_BUSY.join(', ')}`);
  return text as OnBusy;
}
