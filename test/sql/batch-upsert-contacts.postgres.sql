-- 4 parameters
/* prepared */ insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
    select u.project_id, u.email, u.name, '{}', 'active', u.now, u.now
    from unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) with ordinality as u("project_id", "email", "name", "now", "ord")
    order by u.ord
    on conflict (project_id, email) do update set name = excluded.name, updated_at = excluded.updated_at where nullif(excluded.name, '') is not null and excluded.name is distinct from contacts.name
    returning id, project_id, email, name, status;

-- 2 parameters
/* prepared */ select c.id, c.project_id, c.email, c.name, c.status from contacts c
    join unnest($1::bigint[], $2::text[]) as u("project_id", "email") on c.project_id = u.project_id and c.email = u.email;
