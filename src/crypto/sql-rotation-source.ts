import type { Store } from '../db/index.js';
import { aadBinding } from './envelope.js';
import type { EncryptedRow, RotationSource } from './rotation.js';

export interface SqlRotationSourceOptions {
  name: string;
  table: string;
  /** Primary key column (default `id`). */
  idColumn: string;
  /** Organization column (default `organization_id`). */
  orgColumn: string;
  /** For a table of instance-wide values: the organisation every row was sealed for (no column then). */
  fixedOrgId?: string;
  /** Column holding the envelope string. */
  blobColumn: string;
  /** The AAD purpose the resource seals with (e.g. `llm_provider.api_key`). */
  purpose: string;
  /** Rows per page (default 500). */
  pageSize: number;
  /** Columns whose values the resource binds its values to (`aadBinding` of them, in this order); none by default. */
  bindingColumns: string[];
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A rotation source over one encrypted column of one table: keyset-paged reads, and
 * compare-and-set writes so a value updated during rotation is never overwritten.
 */
export function createSqlRotationSource(
  store: Pick<Store, 'sql'>,
  opts: Partial<SqlRotationSourceOptions> & Pick<SqlRotationSourceOptions, 'name' | 'table' | 'blobColumn' | 'purpose'>,
): RotationSource {
  const {
    name,
    table,
    idColumn = 'id',
    orgColumn = 'organization_id',
    fixedOrgId,
    blobColumn,
    purpose,
    pageSize = 500,
    bindingColumns = [],
  } = opts;
  for (const ident of [table, idColumn, orgColumn, blobColumn, ...bindingColumns]) {
    if (!IDENT.test(ident)) throw new TypeError(`invalid SQL identifier ${JSON.stringify(ident)}`);
  }
  type Row = { id: string; org: string; blob: string } & Record<string, string | null>;
  const org = fixedOrgId === undefined ? `${orgColumn}::text` : 'null';
  const bound = bindingColumns.map((c, i) => `, ${c}::text as b${i}`).join('');
  const select = `select ${idColumn}::text as id, ${org} as org, ${blobColumn} as blob${bound} from ${table} where ${blobColumn} is not null and ${idColumn}::text > ? order by ${idColumn}::text limit ?`;
  const bindingOf = (r: Row) => (bindingColumns.length ? { binding: aadBinding(bindingColumns.map((_, i) => r[`b${i}`] ?? null)) } : {});
  const update = `update ${table} set ${blobColumn} = ? where ${idColumn}::text = ? and ${blobColumn} = ? returning ${idColumn}`;
  return {
    name,
    async *readAll(): AsyncIterable<EncryptedRow> {
      let after = '';
      for (;;) {
        const rows = await store.sql<Row>(select, [after, pageSize]);
        for (const r of rows) yield { row_id: r.id, org_id: fixedOrgId ?? r.org, purpose, blob: r.blob, ...bindingOf(r) };
        if (rows.length < pageSize) return;
        after = rows.at(-1)!.id;
      }
    },
    async write(row, newBlob) {
      return (await store.sql(update, [newBlob, row.row_id, row.blob])).length === 1;
    },
  };
}
