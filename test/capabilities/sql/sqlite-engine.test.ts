import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../src/capabilities/sql/sqlite-engine.js';
import { UnprocessableError } from '../../../src/errors.js';

const sqlError = (pattern: RegExp) => (e: unknown) => e instanceof UnprocessableError && pattern.test(e.message);

describe('sqlite engine', () => {
  it('creates, writes, queries and reports changes and rowids', async () => {
    const db = await openDatabase(null);
    try {
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL DEFAULT 0)');
      assert.deepEqual(db.exec("INSERT INTO t (name) VALUES ('a'), ('b'); INSERT INTO t (name) VALUES ('c')"), {
        changes: 3,
        last_insert_rowid: 3,
      });
      assert.deepEqual(db.exec('UPDATE t SET score = ? WHERE name = ?', [1.5, 'b']), { changes: 1, last_insert_rowid: 3 });
      assert.deepEqual(db.query('SELECT id, name, score FROM t ORDER BY id'), {
        columns: ['id', 'name', 'score'],
        rows: [
          [1, 'a', 0],
          [2, 'b', 1.5],
          [3, 'c', 0],
        ],
        truncated: false,
      });
      assert.deepEqual(db.query("SELECT x'0102' AS b, NULL AS n").rows, [[new Uint8Array([1, 2]), null]]);
    } finally {
      db.close();
    }
  });

  it('round-trips through export() bytes', async () => {
    const a = await openDatabase(null);
    a.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('x', 'y')");
    const bytes = a.export();
    a.close();
    const b = await openDatabase(bytes);
    assert.deepEqual(b.query('SELECT v FROM kv').rows, [['y']]);
    b.close();
  });

  it('keeps databases isolated from each other', async () => {
    const one = await openDatabase(null);
    const two = await openDatabase(null);
    try {
      one.exec('CREATE TABLE only_in_one (x)');
      two.exec('CREATE TABLE only_in_two (y)');
      assert.deepEqual(
        one.schema().map((o) => o.name),
        ['only_in_one'],
      );
      assert.deepEqual(
        two.schema().map((o) => o.name),
        ['only_in_two'],
      );
      assert.throws(() => two.query('SELECT * FROM only_in_one'), sqlError(/no such table: only_in_one/));
      const file = one.query('SELECT file FROM pragma_database_list WHERE name = ?', ['main']).rows[0]![0];
      assert.throws(() => two.exec(`ATTACH '${String(file)}' AS other`), sqlError(/ATTACH is not allowed/));
      assert.throws(() => two.exec("VACUUM INTO '/tmp/x.db'"), sqlError(/VACUUM INTO is not allowed/));
      // the keyword inside a string literal is data, not a statement
      two.exec("INSERT INTO only_in_two VALUES ('ATTACH me')");
    } finally {
      one.close();
      two.close();
    }
  });

  it('caps query rows at the limit (max 1000) and flags truncation', async () => {
    const db = await openDatabase(null);
    db.exec('CREATE TABLE n (i INTEGER)');
    db.exec('WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1500) INSERT INTO n SELECT i FROM c');
    const full = db.query('SELECT i FROM n ORDER BY i');
    assert.equal(full.rows.length, 1000);
    assert.equal(full.truncated, true);
    assert.equal(db.query('SELECT i FROM n', [], { limit: 5000 }).rows.length, 1000);
    assert.deepEqual(db.query('SELECT i FROM n ORDER BY i', undefined, { limit: 2 }), {
      columns: ['i'],
      rows: [[1], [2]],
      truncated: true,
    });
    assert.equal(db.query('SELECT count(*) FROM n').truncated, false);
    db.close();
  });

  it('keeps queries read-only', async () => {
    const db = await openDatabase(null);
    db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    assert.throws(() => db.query('DELETE FROM t'), sqlError(/must be read-only/));
    assert.throws(() => db.query('WITH d AS (SELECT 1) DELETE FROM t'), sqlError(/must be read-only/));
    assert.throws(() => db.query('SELECT 1; DELETE FROM t'), sqlError(/exactly one statement/));
    assert.deepEqual(db.query('SELECT count(*) AS n FROM t').rows, [[1]]);
    db.close();
  });

  it('runs a multi-statement exec atomically and reports SQL errors as 422', async () => {
    const db = await openDatabase(null);
    db.exec('CREATE TABLE t (x UNIQUE)');
    assert.throws(() => db.exec('INSERT INTO t VALUES (1); INSERT INTO t VALUES (1)'), sqlError(/UNIQUE constraint failed/));
    assert.deepEqual(db.query('SELECT count(*) FROM t').rows, [[0]]);
    assert.throws(() => db.exec('SELEC nonsense'), sqlError(/SQL error: .*syntax error/));
    assert.throws(() => db.exec('INSERT INTO t VALUES (?); INSERT INTO t VALUES (2)', [1]), sqlError(/exactly one statement/));
    assert.deepEqual(db.query('SELECT count(*) FROM t').rows, [[0]]);
    assert.throws(() => db.exec('   ;  -- nothing'), sqlError(/no statement/));
    db.close();
  });

  it('lets scripts manage their own transactions, rolling back on failure', async () => {
    const db = await openDatabase(null);
    db.exec('CREATE TABLE t (x UNIQUE)');
    assert.deepEqual(db.exec('BEGIN; INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); COMMIT;').changes, 2);
    assert.throws(() => db.exec('BEGIN; INSERT INTO t VALUES (3); INSERT INTO t VALUES (1); COMMIT;'), sqlError(/UNIQUE/));
    assert.deepEqual(db.query('SELECT x FROM t ORDER BY x').rows, [[1], [2]]);
    db.close();
  });

  it('describes the schema with columns', async () => {
    const db = await openDatabase(null);
    db.exec(
      "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'x'); CREATE INDEX people_name ON people(name); CREATE VIEW names AS SELECT name FROM people",
    );
    const schema = db.schema();
    assert.deepEqual(
      schema.map((o) => [o.type, o.name, o.table]),
      [
        ['table', 'people', 'people'],
        ['view', 'names', 'names'],
        ['index', 'people_name', 'people'],
      ],
    );
    assert.deepEqual(schema[0]!.columns, [
      { name: 'id', type: 'INTEGER', notnull: false, default_value: null, primary_key: true },
      { name: 'name', type: 'TEXT', notnull: true, default_value: "'x'", primary_key: false },
    ]);
    assert.match(schema[0]!.sql!, /^CREATE TABLE people/);
    assert.equal(schema[2]!.columns, undefined);
    db.close();
  });
});
