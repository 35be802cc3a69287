-- 4 parameters
insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
    select u.project_id, u.email, u.name, '{}', 'active', u.now, u.now
    from unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) with ordinality as u("project_id", "email", "name", "now", "ord")
    order by u.ord
    on conflict (project_id, email) do nothing
    returning id, project_id, email, name, status;

-- 2 parameters
select c.id, c.project_id, c.email, c.name, c.status from contacts c
    join unnest($1::bigint[], $2::text[]) as u("project_id", "email") on c.project_id = u.project_id and c.email = u.email;

-- 3 parameters
update contacts as c set name = u.name, updated_at = u.now
      from unnest($1::bigint[], $2::text[], $3::bigint[]) as u("id", "name", "now")
      where c.id = u.id;
