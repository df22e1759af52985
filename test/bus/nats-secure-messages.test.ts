/** Turns against nats-servers that require TLS and a password (see nats-secure.test.ts). */
process.env['NATS_TEST_SECURE'] = '1';
await import('../turns/messages.test.js');
