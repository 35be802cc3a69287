// The row types of src/db/schema.ts (and tables/) against the columns the migrations really make, on
// each database: the same tables, the same columns, nullable where and only where the type admits null,
// numbers in numeric columns and strings in text ones, and a column the type lets an insert leave out
// (`Generated`) has a default. A migration without its type, or a type without its migration, fails here.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import ts from 'typescript';
import type { Db } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { DIALECTS, testDatabase } from './support/harness.js';

type Kind = 'number' | 'string' | 'boolean';
interface Column {
  kind: Kind;
  nullable: boolean;
  /** Optional on insert: the database must fill it. */
  generated: boolean;
}
type Tables = Map<string, Map<string, Column>>;

/** Kysely's own bookkeeping: not the product's tables. */
const NOT_OURS = new Set(['kysely_migration', 'kysely_migration_lock']);

function declaredTables(): Tables {
  const file = join(import.meta.dirname, '..', 'src', 'db', 'schema.ts');
  const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const database = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'Database',
  );
  assert.ok(database, 'schema.ts declares Database');
  const out: Tables = new Map();
  for (const member of database.members) {
    if (!ts.isPropertySignature(member) || !member.type) continue;
    const columns = new Map<string, Column>();
    for (const prop of checker.getTypeFromTypeNode(member.type).getProperties()) {
      const decl = prop.valueDeclaration;
      assert.ok(decl && ts.isPropertySignature(decl) && decl.type, `${prop.name}: a typed property`);
      let node = decl.type;
      const generated = ts.isTypeReferenceNode(node) && node.typeName.getText() === 'Generated';
      if (generated) node = (node as ts.TypeReferenceNode).typeArguments![0]!;
      const type = checker.getTypeFromTypeNode(node);
      const parts = type.isUnion() ? type.types : [type];
      const nullable = parts.some((p) => p.flags & ts.TypeFlags.Null);
      const rest = parts.filter((p) => !(p.flags & ts.TypeFlags.Null));
      const kindOf = (p: ts.Type): Kind | 'other' =>
        p.flags & ts.TypeFlags.NumberLike
          ? 'number'
          : p.flags & ts.TypeFlags.StringLike
            ? 'string'
            : p.flags & ts.TypeFlags.BooleanLike
              ? 'boolean'
              : 'other';
      const kinds = new Set(rest.map(kindOf));
      assert.equal(kinds.size, 1, `${(member.name as ts.Identifier).text}.${prop.name}: one kind of value`);
      const [kind] = [...kinds];
      assert.notEqual(kind, 'other', `${prop.name}: a number, string or boolean`);
      columns.set(prop.name, { kind: kind as Kind, nullable, generated });
    }
    out.set((member.name as ts.Identifier).text, columns);
  }
  return out;
}

interface DbColumn {
  table: string;
  name: string;
  /** Declared type, lower case. */
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

async function realColumns(database: Db): Promise<DbColumn[]> {
  if (database.dialect === 'postgres') {
    const { rows } = await sql<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
    }>`select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
       where table_schema = ${database.schema}`.execute(database.db);
    return rows.map((r) => ({
      table: r.table_name,
      name: r.column_name,
      type: r.data_type.toLowerCase(),
      nullable: r.is_nullable === 'YES',
      hasDefault: r.column_default !== null,
    }));
  }
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'
    and name not like 'sqlite_%'`.execute(database.db);
  const out: DbColumn[] = [];
  for (const { name: table } of tables.rows) {
    const info = await sql<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>`
      select * from pragma_table_info(${table})`.execute(database.db);
    const integerKey = info.rows.filter((c) => c.pk > 0).length === 1;
    for (const c of info.rows) {
      // An INTEGER PRIMARY KEY is the rowid: never null, numbered by SQLite when left out.
      const rowid = integerKey && c.pk > 0 && c.type.toLowerCase() === 'integer';
      out.push({
        table,
        name: c.name,
        type: c.type.toLowerCase(),
        nullable: c.notnull === 0 && c.pk === 0,
        hasDefault: c.dflt_value !== null || rowid,
      });
    }
  }
  return out;
}

const NUMERIC = /^(integer|bigint|smallint|int|numeric|real|double precision|double)/;
const TEXT = /^(text|character varying|varchar|character)/;
/** A boolean in the types is a 0/1 integer column (SQLite has no boolean type). */
const fits = (kind: Kind, dbType: string) =>
  kind === 'string' ? TEXT.test(dbType) : NUMERIC.test(dbType) || (kind === 'boolean' && dbType === 'boolean');

for (const d of DIALECTS) {
  describe(`row types against the migrated database [${d.name}]`, { skip: d.skip }, () => {
    let t: Awaited<ReturnType<typeof testDatabase>>;
    let declared: Tables;
    let real: DbColumn[];
    before(async () => {
      t = await testDatabase(d.name);
      await migrateToLatest(t.db);
      declared = declaredTables();
      real = (await realColumns(t.db)).filter((c) => !NOT_OURS.has(c.table));
    });
    after(async () => await t?.cleanup());

    it('declares every table and column the migrations make, and no other', () => {
      const db = [...new Set(real.map((c) => c.table))].sort();
      assert.deepEqual([...declared.keys()].sort(), db);
      for (const table of db) {
        assert.deepEqual(
          [...declared.get(table)!.keys()].sort(),
          real
            .filter((c) => c.table === table)
            .map((c) => c.name)
            .sort(),
          `columns of ${table}`,
        );
      }
    });

    it('a column is nullable exactly when its type admits null, and of the kind its type says', () => {
      const wrong: string[] = [];
      for (const c of real) {
        const col = declared.get(c.table)?.get(c.name);
        if (!col) continue;
        if (col.nullable !== c.nullable)
          wrong.push(`${c.table}.${c.name}: type nullable ${col.nullable}, column ${c.nullable}`);
        if (!fits(col.kind, c.type)) wrong.push(`${c.table}.${c.name}: type ${col.kind}, column ${c.type}`);
        if (col.generated && !c.hasDefault && !c.nullable)
          wrong.push(`${c.table}.${c.name}: Generated but the database has no default`);
      }
      assert.deepEqual(wrong, []);
    });
  });
}
