import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its plugin is the `.default` of the module object.
const addFormats = ajvFormats.default;

/**
 * Index of the first schema that does not compile (ajv, unknown keywords tolerated as LLM
 * vendors add their own), or -1. Compiling is super-linear in the schema (2,000 properties
 * took 3 s, a 20,000-value enum half a second): the service runs this in the parse pool.
 * A fresh ajv per call, not the shared one (src/validation/ajv.ts): a tenant's schema must not
 * land in the shared instance's caches and `$id` registry (a tenant `$id` could shadow or clash
 * with ours, and what it compiles would stay in memory for good), its lax options (unknown
 * keywords allowed) must not loosen ours, and its compile time must not be spent there.
 */
export function firstNonCompilingSchema(schemas: readonly Record<string, unknown>[]): number {
  const ajv = tenantAjv();
  return schemas.findIndex((schema) => {
    try {
      ajv.compile(schema);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * A fresh ajv for tenant schemas (client tools, reply formats: src/offthread/reply-schemas.ts),
 * for the reasons above; `allErrors` where the errors are shown (a repair note lists them all).
 */
export function tenantAjv(opts: { allErrors?: boolean } = {}): Ajv {
  const ajv = new Ajv({ strict: false, logger: false, addUsedSchema: false, validateSchema: true, allErrors: opts.allErrors ?? false });
  addFormats(ajv);
  return ajv;
}
