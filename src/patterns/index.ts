export { compileLinearRegex, MAX_PROGRAM_SIZE } from './linear-regex.js';
export type { LinearRegex, LinearRegexOptions } from './linear-regex.js';
export { compileGlob } from './glob.js';
