import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forbiddenSql, isBlankSql, managesTransactions, startsReadOnly, sqlWords } from '../../../src/capabilities/sql/sql-text.js';

describe('sql text checks', () => {
  it('sees keywords outside literals, identifiers and comments only', () => {
    assert.deepEqual(sqlWords(`SELECT 'attach' AS "detach" -- attach\n/* attach */ FROM t`), ['SELECT', 'AS', 'FROM', 'T']);
    assert.equal(forbiddenSql("SELECT 'ATTACH'"), null);
    assert.match(forbiddenSql("attach 'x' as y")!, /ATTACH/);
    assert.match(forbiddenSql('DETACH y')!, /DETACH/);
    assert.match(forbiddenSql("vacuum into 'f'")!, /VACUUM INTO/);
    assert.equal(forbiddenSql('VACUUM'), null);
    assert.match(forbiddenSql('PRAGMA max_page_count = 1e9')!, /max_page_count is not allowed/);
    assert.match(forbiddenSql('pragma main . PAGE_SIZE=65536')!, /page_size is not allowed/);
    assert.match(forbiddenSql('SELECT 1; PRAGMA temp_store = 1')!, /temp_store/);
    assert.equal(forbiddenSql('PRAGMA table_info(page_size)'), null);
    assert.equal(forbiddenSql("SELECT 'PRAGMA max_page_count=9'"), null);
    assert.equal(forbiddenSql('PRAGMA foreign_keys = ON'), null);
  });

  it('recognises transaction control, read-only starts and blank remainders', () => {
    assert.equal(managesTransactions('BEGIN; INSERT INTO t VALUES (1); COMMIT'), true);
    assert.equal(managesTransactions("INSERT INTO t VALUES ('BEGIN;')"), false);
    assert.equal(startsReadOnly('  with x as (select 1) select * from x'), true);
    assert.equal(startsReadOnly('/* c */ SELECT 1'), true);
    assert.equal(startsReadOnly('INSERT INTO t VALUES (1)'), false);
    assert.equal(isBlankSql(' ; -- done\n /* x */ ;'), true);
    assert.equal(isBlankSql("'x'"), false);
  });

  it('reads a pragma name as SQLite does, however it is quoted (issue 30 item 4)', () => {
    for (const sql of [
      'PRAGMA "max_page_count"=2147483646',
      'PRAGMA [temp_store]=FILE',
      "PRAGMA 'hard_heap_limit'=1",
      'PRAGMA `soft_heap_limit`=0',
      'PRAGMA "main"."page_size"=65536',
      "pragma [main] . 'MMAP_SIZE' = 1",
      'PRAGMA/**/"max_page_count"=9',
      'EXPLAIN PRAGMA "temp_store"=2',
    ]) {
      assert.match(forbiddenSql(sql) ?? '', /is not allowed: the service sets it/, sql);
    }
    // A Tcl-style variable swallows a quote SQLite does not read as one: the pragma after it still counts.
    assert.match(forbiddenSql("SELECT $a(') ; PRAGMA temp_store=2; --'") ?? '', /temp_store/);
    assert.equal(forbiddenSql(`SELECT 'PRAGMA "max_page_count"=1'`), null);
    assert.equal(forbiddenSql('PRAGMA "table_info"(t)'), null);
  });

  it('refuses VACUUM INTO with a schema name, quoted or not', () => {
    for (const sql of ["VACUUM main INTO 'x.db'", 'VACUUM "main" INTO \'x.db\'', "vacuum [temp] into 'y'"]) {
      assert.match(forbiddenSql(sql) ?? '', /VACUUM INTO is not allowed/, sql);
    }
    assert.equal(forbiddenSql('VACUUM main'), null);
  });

  it('keeps a trigger body inside its CREATE TRIGGER statement', () => {
    const trigger = 'CREATE TRIGGER tr AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); END; INSERT INTO a VALUES (1)';
    assert.equal(managesTransactions(trigger), false);
    assert.equal(managesTransactions(`${trigger}; COMMIT`), true);
  });
});
