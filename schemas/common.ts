import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/**
 * A reference to a named schema (`$ref` to its `$id`), typed as the schema it names: routes and
 * schemas refer to components by name, and TypeScript still sees the shape.
 */
export function ref<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new Error('ref: the schema has no $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

/** Spec section 7: every error response. */
export const ErrorResponse = Type.Object(
  { error: Type.String(), status: Type.Integer() },
  { $id: 'ErrorResponse', additionalProperties: false },
);

export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });

export const IdParams = Type.Object({ id: Uuid });

/**
 * The same array as `data` under the name the earlier public API's SDK reads (`agents`,
 * `sessions`, `messages`); docs/decisions/0044-earlier-api-aliases.md.
 */
function aliasOf<T extends TSchema>(item: T, alias: string | undefined) {
  return alias
    ? { [alias]: Type.Array(item, { description: 'The same items as `data` (alias for clients of the earlier public API).' }) }
    : {};
}

/** `{data, total}` for non-paginated lists (spec section 1); `alias` names a copy of `data`. */
export function ListOf<T extends TSchema>(item: T, $id: string, alias?: string) {
  return Type.Object({ data: Type.Array(item), ...aliasOf(item, alias), total: Type.Integer({ minimum: 0 }) }, { $id });
}

/** `{data, total, offset, limit}` for paginated lists; `alias` names a copy of `data`. */
export function PageOf<T extends TSchema>(item: T, $id: string, alias?: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      ...aliasOf(item, alias),
      total: Type.Integer({ minimum: 0 }),
      offset: Type.Integer({ minimum: 0 }),
      limit: Type.Integer({ minimum: 1 }),
    },
    { $id },
  );
}

export const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('unhealthy')]),
    checks: Type.Record(Type.String(), Type.String()),
  },
  { $id: 'Health' },
);

/** A capability reference in its object form (spec 2.1); string ids are accepted where noted. */
export const CapabilityRef = Type.Object(
  { ref: Type.String({ minLength: 1, maxLength: 128 }), config: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  { $id: 'CapabilityRef', additionalProperties: false },
);
