export { compileLinearRegex } from './linear-regex.js';
export type { LinearRegex, LinearRegexOptions } from './linear-regex.js';
export { buildNeedleSet } from './needle-set.js';
export type { NeedleSet } from './needle-set.js';
