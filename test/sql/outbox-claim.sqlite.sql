-- 14 parameters
with "expired" as (select "id" from "scheduled_emails" where status = 'sending' and "locked_until" < ? order by "locked_until" limit ?), "fair" as (select r.id from (select e.id, e.due_at, row_number() over (partition by e.project_id order by e.due_at, e.id) as rn
          from projects p join scheduled_emails e on e.id in (
            select x.id from scheduled_emails x
            where x.project_id = p.id and x.status in ('scheduled', 'queued') and x.due_at <= ?
            order by x.due_at limit ?)
          where true ) r order by r.rn, r.due_at limit ?), "pending" as (select "id" from "scheduled_emails" where "id" in (select "fair"."id" from "fair")) update "scheduled_emails" set "status" = ?, "send_started_at" = ?, "locked_by" = ?, "locked_until" = ?, "updated_at" = ?, "attempts" = case when status = 'sending' then attempts + 1 else attempts end, "last_error" = case when status = 'sending' then ? else last_error end where "id" in (select "candidates"."id" from (select "id" from "expired" union all select "id" from "pending") as "candidates" limit ?) and ((status in ('scheduled', 'queued') and "due_at" <= ?) or (status = 'sending' and "locked_until" < ?)) returning *;
