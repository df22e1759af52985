export { compileLinearRegex, MAX_PROGRAM_SIZE } from './linear-regex.js';
export type { LinearRegex, LinearRegexOptions } from './linear-regex.js';
export { compileGlob } from './glob.js';
export { buildNeedleSet } from './needle-set.js';
export type { NeedleSet } from './needle-set.js';
