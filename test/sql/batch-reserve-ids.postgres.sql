-- 4 parameters
/* prepared */ select array(select nextval(pg_get_serial_sequence($1, 'id')) from generate_series(1, $2::int)) as "events", array(select nextval(pg_get_serial_sequence($3, 'id')) from generate_series(1, $4::int)) as "scheduled_emails";
