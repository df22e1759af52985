/**
 * Import boundaries of the architecture (README "Layout"): schemas are the contract and depend on
 * nothing of ours; the bus and the HTTP layer are adapters below the API modules; production code
 * never reaches into tests or benchmarks. `npm run check:boundaries` runs it in CI.
 */
module.exports = {
  forbidden: [
    { name: 'schemas-stand-alone', severity: 'error', comment: 'schemas/ is the contract: it imports nothing from src/',
      from: { path: '^schemas/' }, to: { path: '^src/' } },
    { name: 'bus-below-api', severity: 'error', comment: 'the bus adapters know nothing of the API modules or the turn',
      from: { path: '^src/bus/' }, to: { path: '^(src/(api|turns)|actors)/' } },
    { name: 'http-below-api', severity: 'error', comment: 'the HTTP layer serves routes; it does not import the modules that declare them',
      from: { path: '^src/http/' }, to: { path: '^(src/(api|turns)|actors)/' } },
    { name: 'actors-wired-by-app-only', severity: 'error',
      comment: 'the session actor (actors/) uses src/; in src/ only the composition root (src/app.ts) knows it',
      from: { path: '^src/', pathNot: '^src/app\\.ts$' }, to: { path: '^actors/' } },
    { name: 'actors-reach-src-through-index', severity: 'error',
      comment: 'the actor reaches the turn contract, the LLM module and API modules through their index.ts',
      from: { path: '^actors/' }, to: { path: '^src/(api/[^/]+|turns|llm)/', pathNot: '^src/(api/[^/]+|turns|llm)/index\\.ts$' } },
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
