-- 0 parameters
select min("due_at") as "t" from "scheduled_emails" where status in ('scheduled', 'queued');

-- 0 parameters
select min("locked_until") as "t" from "scheduled_emails" where status = 'sending';
