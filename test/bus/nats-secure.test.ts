/**
 * The distributed suite once more against nats-servers that require TLS client certificates and
 * a password (docs/operations.md section 18), in three files (test/bus/nats-secure*.test.ts) that
 * the test run schedules beside the others: here bus conformance and the 3-node cluster; worker-
 * process recovery and turns in the other two. The variable is set before the imported file (and
 * the helpers it imports) load.
 */
process.env['NATS_TEST_SECURE'] = '1';
await import('./nats.test.js');
