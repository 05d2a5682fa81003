-- An agent's post-call analysis settings keep their keys in the order the developer wrote them. jsonb stores an
-- object's keys sorted (shorter first, then bytewise), so a structured-data schema came back with its properties
-- reordered: that order is what the model is asked to fill in (a "reasoning" field put before the verdict it
-- supports came after it) and what the developer reads back. json keeps the text as written.
-- Rows written before this keep the order jsonb gave them (the original is gone).
alter table agents alter column analysis type json using analysis::json;

-- Versions snapshot the row as jsonb (0901), which would sort the keys again: the snapshot holds the settings as
-- their JSON text (a jsonb string), read back by shared/domains/agents/versions.ts. Comparing two snapshots then
-- also sees a change of order, which is a change of what the model is asked.
create or replace function agent_config(a agents) returns jsonb language sql stable as $$
  select case when a.analysis is null then c.config
              else jsonb_set(c.config, '{analysis}', to_jsonb(a.analysis::text)) end
    from (select to_jsonb(a) - array['developer_id', 'id', 'seq', 'version', 'status', 'tool_secret', 'created_at',
      'updated_at', 'archived_at'] as config) c
$$;
