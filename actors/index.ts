// The session actor (ARCHITECTURE.md section 5): the one writer of its session's log — claiming,
// the reason/act loop, tools, cancel, recovery — and the scheduler that fires into it. src/app.ts
// wires it; nothing else in src/ imports it.
export { createTurnModule } from './turn-module.js';
export type { TurnModule, TurnModuleDeps, TurnPorts } from './turn-module.js';
export { createTurnRunner, defaultTurnRunnerOptions } from './session/turn-runner.js';
export type { TurnRunner, TurnRunnerDeps, TurnRunnerOptions } from './session/turn-runner.js';
export { createTurnWorker } from './session/turn-worker.js';
export type { TurnWorker, TurnWorkerDeps, TurnWorkerOptions } from './session/turn-worker.js';
export { unavailableToolStorage, toolContextFor, STORAGE_UNAVAILABLE_MESSAGE } from './session/steps/tool-context.js';
export type { SessionToolStorage, ToolContextFactory, ToolSessionRef } from './session/steps/tool-context.js';
export { createScheduler } from './scheduler/scheduler.js';
