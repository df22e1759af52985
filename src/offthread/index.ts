export { createParsePool, DEFAULT_PARSE_POOL_OPTIONS, ParseLimitError } from './parse-pool.js';
export type { ParsePool, ParsePoolOptions } from './parse-pool.js';
export type { ParseJobInput, ParseResults } from './parse-jobs.js';
export { createGrepPool, DEFAULT_GREP_POOL_OPTIONS, GrepTimeoutError } from './grep-pool.js';
export type { GrepPool, GrepPoolOptions, GrepSearch, TextMatcher } from './grep-pool.js';
export type { PoolTenant } from './fair-share.js';
export { firstNonCompilingSchema } from './client-tool-schemas.js';
export { AGENT_MAX_BODY_BYTES, type DefinitionFormat, FORMAT_NAMES, parseDefinition } from './definition-parse.js';
export { createDeadlinePool, formatSeconds } from './deadline-pool.js';
