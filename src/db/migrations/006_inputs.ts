// Addresses are stored with their domain in Unicode from now on (SPEC §10), so `ivan@пример.рф` and the
// `ivan@xn--e1afmkfd.xn--p1ai` stored before are one contact. Only punycode domains can change (Unicode
// addresses were refused until now), so only rows holding `xn--` are read. A contact whose Unicode form is
// already taken in its project keeps its row as it is rather than breaking the unique index.
import { sql, type Kysely } from 'kysely';
import { canonicalAddress } from '../../domain/email.js';

const COLUMNS = [
  ['contacts', 'email'],
  ['scheduled_emails', 'to_email'],
  ['events', 'email'],
  ['projects', 'from_email'],
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, column] of COLUMNS) {
    const rows = await db
      .selectFrom(table)
      .select(['id', sql.ref<string>(column).as('address')])
      .where(sql.ref(column), 'like', '%xn--%')
      .execute();
    for (const r of rows as { id: number; address: string }[]) {
      const canonical = canonicalAddress(r.address);
      if (canonical === r.address) continue;
      let q = db
        .updateTable(table)
        .set({ [column]: canonical })
        .where('id', '=', r.id);
      if (table === 'contacts') {
        q = q.where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('contacts as other')
                .select('other.id')
                .where('other.email', '=', canonical)
                .where('other.project_id', '=', sql.ref('contacts.project_id')),
            ),
          ),
        );
      }
      await q.execute();
    }
  }
}
