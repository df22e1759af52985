/**
 * The distributed suite once more against nats-servers that require TLS client certificates and
 * a password (docs/operations.md section 18): bus conformance, the 3-node cluster, worker-process
 * recovery and turns. One file, so the test run schedules it beside the others; the variable is
 * set before those files (and the helpers they import) load.
 */
process.env['NATS_TEST_SECURE'] = '1';
await import('./nats.test.js');
await import('../turns/recovery.test.js');
await import('../turns/messages.test.js');
