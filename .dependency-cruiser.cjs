/**
 * Import boundaries of the architecture (README "Layout"): schemas are the contract and depend on
 * nothing of ours; the bus and the HTTP layer are adapters below the API modules; production code
 * never reaches into tests or benchmarks. `npm run check:boundaries` runs it in CI.
 */
/** A folder's front door: its index.ts, and for the API's resource modules src/api/<resource>/index.ts. */
const THROUGH_INDEX_TARGETS = ['^src/[^/]+/index\\.ts$', '^src/api/[^/]+/index\\.ts$'];

/**
 * Importers that may reach past a folder's index.ts, each with its reason (regular expressions on the path).
 */
const FROM_EXCEPTIONS = [
  // Read before the app's modules load (src/main.ts times the phases apart): config.ts and
  // main.ts take pure parsers, the data directory lock, the database thread and the port hold
  // alone, not their folders' index (which loads NATS, uWebSockets.js, PGlite and the pools).
  '^src/config\\.ts$',
  '^src/main\\.ts$',
  // A command-line tool (npm run rotate-keys): takes the data directory lock without loading the store.
  '^src/crypto/rotate-command\\.ts$',
  // Worker threads load the job side of their pool alone (memory-capped, started per job).
  '^src/capabilities/sql/sql-worker\\.ts$',
  // The parse worker thread's parsers: one of them checks JSON with the HTTP layer's input hygiene,
  // which it takes alone (src/http/index.ts would load uWebSockets.js into every parse worker).
  '^src/offthread/definition-parse\\.ts$',
  // A dynamic import: the parsers load at their first use, off the start-up path (test/start-up.test.ts).
  '^src/api/agents/service\\.ts$',
  '^src/capabilities/web-fetch/content\\.ts$',
  // http and auth know each other's types: the authenticator is a pipeline stage and a request
  // carries a Principal. Through both index files the type-only imports would close a circle, so
  // the HTTP layer takes the Principal type (and the tracing port's type) from their files.
  '^src/http/(route|pipeline|exchange)\\.ts$',
  // The entities' own index: auth's token tables use the entity classes the store registers.
  '^src/auth/(jwt-secret|refresh-tokens)\\.ts$',
];
/** Imported files that may be reached past their folder's index.ts, with the reason. */
const TO_EXCEPTIONS = [];

module.exports = {
  forbidden: [
    { name: 'schemas-stand-alone', severity: 'error', comment: 'schemas/ is the contract: it imports nothing from src/',
      from: { path: '^schemas/' }, to: { path: '^src/' } },
    { name: 'bus-below-api', severity: 'error', comment: 'the bus adapters know nothing of the API modules or the turn',
      from: { path: '^src/bus/' }, to: { path: '^(src/(api|turns)|actors)/' } },
    { name: 'http-below-api', severity: 'error', comment: 'the HTTP layer serves routes; it does not import the modules that declare them',
      from: { path: '^src/http/' }, to: { path: '^(src/(api|turns)|actors)/' } },
    { name: 'no-back-arrow', severity: 'error',
      comment: 'the layers below the API modules and the turn (bus, http, db, llm, offthread, observability...) import none of them: an import runs down, never back up',
      from: { path: '^src/[^/]+/', pathNot: '^src/(api|turns|app)/' }, to: { path: '^(src/(api|turns)|actors)/' } },
    { name: 'actors-wired-by-app-only', severity: 'error',
      comment: 'the session actor (actors/) uses src/; in src/ only the composition root (src/app.ts, src/app/) knows it',
      from: { path: '^src/', pathNot: ['^src/app\\.ts$', '^src/app/'] }, to: { path: '^actors/' } },
    { name: 'no-test-code-in-production', severity: 'error',
      from: { path: '^(src|actors|schemas)/' }, to: { path: '^(test|bench)/' } },
    { name: 'api-resource-through-index', severity: 'error',
      comment: 'a resource module (src/api/<resource>/) is reached through its index.ts; its other files are its own',
      // The parse worker thread (src/offthread/parse-jobs.ts) loads the agents' pure parsers alone,
      // not the module with its routes and service.
      from: { path: '^src/', pathNot: ['^src/api/[^/]+/', '^src/offthread/parse-jobs\\.ts$'] },
      to: { path: '^src/api/[^/]+/', pathNot: '^src/api/[^/]+/index\\.ts$' } },
    { name: 'api-resource-through-index-across', severity: 'error',
      comment: 'one resource module reaches another through its index.ts',
      from: { path: '^src/api/([^/]+)/' }, to: { path: '^src/api/[^/]+/', pathNot: ['^src/api/$1/', '^src/api/[^/]+/index\\.ts$'] } },
    { name: 'nats-only-in-bus-nats', severity: 'error', comment: 'NATS is one adapter of the bus ports: only src/bus/nats/ speaks nats.js',
      from: { path: '^(src|actors)/', pathNot: '^src/bus/nats/' }, to: { path: '(^|/)node_modules/@nats-io/' } },
    { name: 'uws-only-in-http', severity: 'error', comment: 'uWebSockets.js is the HTTP adapter: only src/http/ speaks it',
      from: { path: '^(src|actors)/', pathNot: '^src/http/' }, to: { path: '(^|/)node_modules/uWebSockets\\.js/' } },
    { name: 'actors-through-index', severity: 'error',
      comment: 'the actor reaches a folder of src/ (the turn contract, the LLM module, API modules, the bus...) through its index.ts',
      from: { path: '^actors/' }, to: { path: '^src/[^/]+/', pathNot: THROUGH_INDEX_TARGETS } },
    { name: 'folder-through-index', severity: 'error',
      comment: 'a top-level folder of src/ is reached from another through its index.ts (EXCEPTIONS says where not, and why)',
      from: { path: '^src/([^/]+)/', pathNot: FROM_EXCEPTIONS },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', ...THROUGH_INDEX_TARGETS, ...TO_EXCEPTIONS] } },
    { name: 'root-through-index', severity: 'error',
      comment: 'the files at the top of src/ reach its folders through their index.ts (EXCEPTIONS says where not, and why)',
      from: { path: '^src/[^/]+\\.ts$', pathNot: FROM_EXCEPTIONS },
      // src/app.ts is the entry of the composition root's own folder, src/app/.
      to: { path: '^src/[^/]+/', pathNot: [...THROUGH_INDEX_TARGETS, ...TO_EXCEPTIONS, '^src/app/'] } },
    { name: 'no-circular', severity: 'error', comment: 'a runtime import cycle',
      from: {}, to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } } },
    { name: 'no-type-only-circular', severity: 'error', comment: 'an import cycle made of type-only imports',
      from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
