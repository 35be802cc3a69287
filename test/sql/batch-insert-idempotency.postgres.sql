-- 8 parameters
insert into idempotency ("project_id", "idempotency_key", "request_hash", "endpoint", "response_status", "response_body", "event_id", "created_at")
    select "u"."project_id", "u"."idempotency_key", "u"."request_hash", "u"."endpoint", "u"."response_status", "u"."response_body", "u"."event_id", "u"."created_at" from unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::bigint[], $8::bigint[]) as u("project_id", "idempotency_key", "request_hash", "endpoint", "response_status", "response_body", "event_id", "created_at")
    order by u.project_id, u.idempotency_key
    on conflict (project_id, idempotency_key) do nothing;
