export { type Backoff, pauseMs } from './backoff.js';
export { DeadlineError, withDeadline } from './deadline.js';
export { retryPolicies } from './policies.js';
export { type Retrier, type RetryEvent, type RetryOptions, type RetryPolicy, retrier, retry } from './retry.js';
export { abortableSleep, abortReason } from './sleep.js';
export { waitUntil } from './wait-until.js';
