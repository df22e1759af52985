import { Ajv, type AnySchema } from 'ajv';
import ajvFormats from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its plugin is the `.default` of the module object.
const addFormats = ajvFormats.default;

/**
 * The one ajv instance for the service's own schemas (routes, replies, config, imports,
 * capability configs, tool arguments). Every validator is a pure check: no coercion and no
 * defaults, so a reply is never changed and one compiled function (cached by schema object)
 * serves every caller. Text coercion (./coerce.ts) and defaults (./defaults.ts) are explicit
 * steps of the callers that want them. Caller-supplied schemas (client tools) never come here.
 */
export const ajv = new Ajv({
  strict: true,
  discriminator: true,
  allErrors: false,
  removeAdditional: false,
  useDefaults: false,
  coerceTypes: false,
  // No optimisation pass over the generated code: it was ~45 % of compiling the routes'
  // validators at start (ajv compiles them all then, style rule 6), and the validators it
  // produced checked requests no faster (docs/decisions/0066-start-up-phases-and-cuts.md).
  code: { optimize: false },
});
addFormats(ajv);

/** Registers named schemas once (several apps in one process share the instance). */
export function addNamedSchemas(schemas: readonly AnySchema[]): void {
  for (const s of schemas) {
    const id = typeof s === 'object' && s !== null ? (s as { $id?: unknown }).$id : undefined;
    if (typeof id === 'string' && ajv.getSchema(id) !== undefined) continue;
    ajv.addSchema(s);
  }
}

/** Adds a format unless it is already known (capability registries are built per app). */
export function addFormatOnce(name: string, validate: (value: string) => boolean): void {
  if (!(name in ajv.formats)) ajv.addFormat(name, { type: 'string', validate });
}

/** The schema registered under `$ref`, for the default filler's walk. */
export function resolveRef(ref: string): unknown {
  return ajv.getSchema(ref)?.schema;
}
