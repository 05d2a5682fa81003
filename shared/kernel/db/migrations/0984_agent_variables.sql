-- Defaults of an agent's template variables (issue #33): `{"name": {"default": "there"}}`; a `{{name}}` the call
-- does not give takes its default, else is left out. Null: none. Snapshotted into agent_versions like every column.
alter table agents add column variables jsonb;
