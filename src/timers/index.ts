export { TimerWheel } from './timer-wheel.js';
export type { TimerTarget, Timers } from './timer-wheel.js';
