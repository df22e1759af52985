#!/usr/bin/env node
// The entry point npm links as `agent-session`; the program is compiled to dist/ by `npm run build` (run by `prepare` on install).
import '../dist/bin.js';
