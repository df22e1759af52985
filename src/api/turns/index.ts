// The turn's API half (spec 4.2): accept a message, cancel, client tool results; their routes.
export { createTurnService } from './turn-service.js';
export type { Acceptance, TurnPrincipal, TurnService, TurnServiceDeps } from './turn-service.js';
export { turnRoutes } from './routes.js';
export { createOrgTurnCap } from './org-turn-cap.js';
export type { OrgTurnCap } from './org-turn-cap.js';
