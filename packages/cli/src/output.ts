/** Output helpers: `--json` prints machine-readable JSON on stdout, otherwise short text and tables. */
export interface GlobalOptions {
  url?: string;
  key?: string;
  json?: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/**
 * A list as the API pages it, one shape for every `ls --json`: `data` and `total`, plus `offset`
 * and `limit` where the route pages (the earlier API's alias keys such as `agents` are left out).
 */
export function printPage(list: { data: unknown[]; total: number; offset?: number; limit?: number }): void {
  const { data, total, offset, limit } = list;
  printJson({ data, total, ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) });
}

/** A plain left-aligned table of the given columns. */
export function printTable<T extends Record<string, unknown>>(rows: T[], columns: (keyof T & string)[]): void {
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write([line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n') + '\n');
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A progress spinner on stderr while `work` runs; silent when stderr is not a terminal or `quiet`. */
export async function withSpinner<T>(label: string, work: () => Promise<T>, quiet = false): Promise<T> {
  const spinner = startSpinner(label, quiet);
  try {
    return await work();
  } finally {
    spinner.stop();
  }
}

/** Starts a spinner; `stop()` clears its line. */
export function startSpinner(label: string, quiet = false): { stop(): void } {
  if (quiet || !process.stderr.isTTY) return { stop() {} };
  let i = 0;
  const timer = setInterval(() => process.stderr.write(`\r${FRAMES[i++ % FRAMES.length]} ${label}`), 80);
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      process.stderr.write('\r\x1b[2K');
    },
  };
}

/** Text of a terminal style when stdout is a terminal (dim, bold, colours), plain otherwise. */
export function style(code: 'dim' | 'bold' | 'red' | 'green' | 'yellow' | 'cyan', text: string): string {
  if (!process.stdout.isTTY || process.env['NO_COLOR']) return text;
  const codes = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, cyan: 36 } as const;
  return `\x1b[${codes[code]}m${text}\x1b[0m`;
}
