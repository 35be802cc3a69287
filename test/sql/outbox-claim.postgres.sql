-- 14 parameters
with "expired" as (select "id" from "scheduled_emails" where status = 'sending' and "locked_until" < $1 order by "locked_until" limit $2 for update skip locked), "fair" as (select r.id from (select e.id, e.due_at, row_number() over (partition by p.id order by e.due_at, e.id) as rn
          from projects p cross join lateral (
            select x.id, x.due_at from scheduled_emails x
            where x.project_id = p.id and x.status in ('scheduled', 'queued') and x.due_at <= $3
            order by x.due_at limit $4) e
          where true ) r order by r.rn, r.due_at limit $5), "pending" as (select "id" from "scheduled_emails" where "id" in (select "fair"."id" from "fair") for update skip locked) update "scheduled_emails" set "status" = $6, "send_started_at" = $7, "locked_by" = $8, "locked_until" = $9, "updated_at" = $10, "attempts" = case when status = 'sending' then attempts + 1 else attempts end, "last_error" = case when status = 'sending' then $11 else last_error end where "id" in (select "candidates"."id" from (select "id" from "expired" union all select "id" from "pending") as "candidates" limit $12) and ((status in ('scheduled', 'queued') and "due_at" <= $13) or (status = 'sending' and "locked_until" < $14)) returning *;
