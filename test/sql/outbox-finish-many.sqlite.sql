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
    from (values (cast(? as bigint), cast(? as text), cast(? as bigint), cast(? as integer),
      cast(? as text), cast(? as bigint), cast(? as integer),
      cast(? as bigint), cast(? as integer), cast(? as integer),
      cast(? as text), cast(? as integer), cast(? as text),
      cast(? as integer)), (cast(? as bigint), cast(? as text), cast(? as bigint), cast(? as integer),
      cast(? as text), cast(? as bigint), cast(? as integer),
      cast(? as bigint), cast(? as integer), cast(? as integer),
      cast(? as text), cast(? as integer), cast(? as text),
      cast(? as integer))) as v
    where scheduled_emails.id = v.column1 and scheduled_emails.locked_by = ? and status = 'sending'
    returning scheduled_emails.id;
