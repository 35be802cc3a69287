-- 5 parameters
insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
values (?, ?, ?, '{}', 'active', ?, ?)
on conflict (project_id, email) do update set name = excluded.name, updated_at = excluded.updated_at where nullif(excluded.name, '') is not null and excluded.name is distinct from contacts.name
returning id, email, name, status;

-- 0 parameters
select (select max(coalesce((select seq from sqlite_sequence where name = 'events'), 0),
  coalesce((select max(id) from events), 0)) + 1) as events, (select max(coalesce((select seq from sqlite_sequence where name = 'scheduled_emails'), 0),
  coalesce((select max(id) from scheduled_emails), 0)) + 1) as scheduled_emails;

-- 8 parameters
insert into orders (project_id, order_id, cart_type, contact_id, status, course_name,
  created_event_id, created_at, updated_at)
values (?, ?, ?, ?, 'unpaid', ?, ?, ?, ?)
on conflict (project_id, order_id) do nothing
returning id;

-- 18 parameters
insert into scheduled_emails (id, project_id, kind, template_id, template_key, contact_id, to_email,
  to_name, order_id, event_id, campaign_id, chain_step, context, status, due_at, attempts, created_at, updated_at,
  topic, last_error)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, ?, ?, 0, ?, ?, ?, ?);

-- 15 parameters
insert into events (id, project_id, key_id, key_last4, endpoint, event_type, email, order_id,
  idempotency_key, http_status, accepted, error_code, payload, effects, created_at)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- 8 parameters
insert into idempotency (project_id, idempotency_key, request_hash, endpoint, response_status,
  response_body, event_id, created_at)
values (?, ?, ?, ?, ?, ?, ?, ?)
on conflict (project_id, idempotency_key) do nothing;
