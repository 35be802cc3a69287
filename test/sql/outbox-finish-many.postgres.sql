-- 2 parameters
select "id" from "scheduled_emails" where "id" in ($1, $2) order by "id" for update;

-- 29 parameters
update scheduled_emails set
      status = v.column2,
      due_at = coalesce(v.column3, scheduled_emails.due_at),
      last_error = case when v.column4 = 1 then v.column5 else scheduled_emails.last_error end,
      sent_at = coalesce(v.column6, scheduled_emails.sent_at),
      locked_by = case when v.column7 = 1 then null else scheduled_emails.locked_by end,
      locked_until = null,
      updated_at = v.column8,
      attempts = scheduled_emails.attempts + v.column9,
      rendered = case when v.column10 = 1 then v.column11 else scheduled_emails.rendered end,
      message_id = case when v.column12 = 1 then v.column13 else scheduled_emails.message_id end,
      waiting_since = case v.column14 when 1 then coalesce(scheduled_emails.waiting_since, v.column8)
        when 2 then null else scheduled_emails.waiting_since end
    from (values (cast($1 as bigint), cast($2 as text), cast($3 as bigint), cast($4 as integer),
      cast($5 as text), cast($6 as bigint), cast($7 as integer),
      cast($8 as bigint), cast($9 as integer), cast($10 as integer),
      cast($11 as text), cast($12 as integer), cast($13 as text),
      cast($14 as integer)), (cast($15 as bigint), cast($16 as text), cast($17 as bigint), cast($18 as integer),
      cast($19 as text), cast($20 as bigint), cast($21 as integer),
      cast($22 as bigint), cast($23 as integer), cast($24 as integer),
      cast($25 as text), cast($26 as integer), cast($27 as text),
      cast($28 as integer))) as v
    where scheduled_emails.id = v.column1 and scheduled_emails.locked_by = $29 and status = 'sending'
    returning scheduled_emails.id;
