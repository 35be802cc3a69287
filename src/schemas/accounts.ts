// Schemas of administrator accounts, personal tokens and the audit log (SPEC §14).
import { Type, type Static } from 'typebox';
import { ADMIN_ROLES, ADMIN_USER_STATUSES, AUDIT_ACTIONS, AUDIT_VIAS } from '../domain/statuses.js';
import { Cursor, Email, literalUnion, Limit, SiteKey } from './common.js';
import { Ok } from './admin.js';

const Role = literalUnion(ADMIN_ROLES);
const Password = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'at least 10 characters, not a common one',
});
const Projects = Type.Array(SiteKey, { maxItems: 1000, description: 'site keys, for project_admin and viewer' });
const Name = Type.String({ maxLength: 200 });

export const AccountInfo = Type.Union([
  Type.Object({
    id: Type.Union([Type.Integer(), Type.Null()], { description: 'null for the root ADMIN_TOKEN' }),
    email: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    role: Role,
    projects: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null: every project' }),
    read_only: Type.Boolean(),
  }),
]);

export const UserView = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  name: Type.String(),
  role: Role,
  status: literalUnion(ADMIN_USER_STATUSES),
  projects: Type.Array(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const CreateUserBody = Type.Object(
  { email: Email, name: Type.Optional(Name), password: Password, role: Role, projects: Type.Optional(Projects) },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const PatchUserBody = Type.Object(
  {
    email: Type.Optional(Email),
    name: Type.Optional(Name),
    password: Type.Optional(Password),
    role: Type.Optional(Role),
    projects: Type.Optional(Projects),
  },
  { additionalProperties: false },
);

export const TokenView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  last4: Type.String(),
  read_only: Type.Boolean(),
  status: literalUnion(['active', 'revoked', 'expired'] as const),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
});

export const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    read_only: Type.Optional(Type.Boolean()),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export const CreatedToken = Type.Intersect([
  Type.Object({ ok: Ok, token: Type.String({ description: 'shown once: store it now' }) }),
  TokenView,
]);

export const SessionView = Type.Object({
  id: Type.String(),
  current: Type.Boolean(),
  created_at: Type.String(),
  last_seen: Type.String(),
  expires_at: Type.String(),
});

export const AuditQuery = Type.Object({
  site_key: Type.Optional(SiteKey),
  actor: Type.Optional(Type.String({ maxLength: 254 })),
  action: Type.Optional(literalUnion(AUDIT_ACTIONS)),
  target: Type.Optional(Type.String({ maxLength: 100, description: 'what was changed, e.g. key:12' })),
  since: Type.Optional(Type.String({ format: 'date-time' })),
  until: Type.Optional(Type.String({ format: 'date-time' })),
  limit: Limit,
  cursor: Cursor,
});

export const AuditItem = Type.Object({
  id: Type.Integer(),
  at: Type.String(),
  actor: Type.String(),
  via: literalUnion(AUDIT_VIAS),
  token: Type.Union([Type.Object({ id: Type.Integer(), name: Type.String() }), Type.Null()], {
    description: 'the personal token that made the change (via "token"), else null',
  }),
  address: Type.Union([Type.String(), Type.Null()]),
  action: Type.String(),
  site_key: Type.Union([Type.String(), Type.Null()]),
  target: Type.Union([Type.String(), Type.Null()]),
  before: Type.Unknown(),
  after: Type.Unknown(),
});

export const SetupBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 200 }), email: Email, name: Type.Optional(Name), password: Password },
  { additionalProperties: false },
);
