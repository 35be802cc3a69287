-- 7 parameters
/* prepared */ insert into orders (project_id, order_id, cart_type, contact_id, status, course_name, created_event_id, created_at, updated_at)
    select u.project_id, u.order_id, u.cart_type, u.contact_id, 'unpaid', u.course_name, u.event_id, u.now, u.now
    from unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[]) with ordinality as u("project_id", "order_id", "cart_type", "contact_id", "course_name", "event_id", "now", "ord")
    order by u.ord
    on conflict (project_id, order_id) do nothing
    returning project_id, order_id;

-- 2 parameters
/* prepared */ select o.project_id, o.order_id, o.status from orders o
    join unnest($1::bigint[], $2::text[]) as u("project_id", "order_id") on o.project_id = u.project_id and o.order_id = u.order_id;
