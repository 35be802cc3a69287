-- 3 parameters
select "events".*, "projects"."site_key" from "events" inner join "projects" on "projects"."id" = "events"."project_id" where "events"."project_id" = $1 and "events"."order_id" = $2 order by "events"."id" desc limit $3;
