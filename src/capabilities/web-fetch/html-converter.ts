import { ParseLimitError, type ParsePool } from '../../offthread/index.js';
import { ToolError } from '../types.js';
import type { HtmlConverter } from './content.js';

/** `fetch_url`'s HTML conversion in the pool; a page past the deadline or memory cap is a tool error. */
export function htmlConverterOf(pool: ParsePool): HtmlConverter {
  return (html, format, caller) =>
    pool.run({ kind: 'html', html, format }, caller).catch((err: unknown) => {
      if (!(err instanceof ParseLimitError)) throw err;
      throw new ToolError(`The page's HTML is too large or too complex to convert (${err.message}); try format "raw".`, { cause: err });
    });
}
