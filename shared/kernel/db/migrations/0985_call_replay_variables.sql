-- A replay's template variables (issue #33): `{{name}}` in the agent's prompt and first message, as the original
-- call's session-create body gave them. Null: none (the agent's defaults apply). SQL only in replay/store.ts.
alter table call_replays add column variables jsonb;
