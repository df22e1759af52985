export { compileLinearRegex } from './linear-regex.js';
export type { LinearRegex, LinearRegexOptions } from './linear-regex.js';
