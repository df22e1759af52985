import { ToolError, type HtmlConverter } from '../capabilities/index.js';
import { ParseLimitError, type ParsePool } from './parse-pool.js';

/** `fetch_url`'s HTML conversion in the pool; a page past the deadline or memory cap is a tool error. */
export function htmlConverterOf(pool: ParsePool): HtmlConverter {
  return (html, format, caller) =>
    pool.run({ kind: 'html', html, format }, caller).catch((err: unknown) => {
      if (!(err instanceof ParseLimitError)) throw err;
      throw new ToolError(`The page's HTML is too large or too complex to convert (${err.message}); try format "raw".`, { cause: err });
    });
}
