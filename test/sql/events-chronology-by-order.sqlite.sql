-- 3 parameters
select "events".*, "projects"."site_key" from "events" inner join "projects" on "projects"."id" = "events"."project_id" where "events"."project_id" = ? and "events"."order_id" = ? order by "events"."id" desc limit ?;
