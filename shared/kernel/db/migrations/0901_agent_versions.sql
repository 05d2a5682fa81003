-- Agent versions (issue 21 item 4): every change of an agent's configuration makes an immutable, numbered
-- snapshot, so a call can say which configuration it ran and a replay can run an older one.
--
-- The snapshot is the agents row as JSON without what is not configuration (keys, order, status, the tool-signing
-- secret, timestamps). A column added to agents later is part of the snapshot without touching this file.
-- Triggers make it hold for every writer (create, update, provisioning): a version cannot be forgotten by a new
-- code path. Archiving, restoring and rotating the secret change no configuration and make no version.
alter table agents add column version int not null default 1;

create function agent_config(a agents) returns jsonb language sql stable as $$
  select to_jsonb(a) - array['developer_id', 'id', 'seq', 'version', 'status', 'tool_secret', 'created_at',
    'updated_at', 'archived_at']
$$;

create table agent_versions (
  developer_id text not null,
  agent_id text not null,
  version int not null check (version >= 1),
  config jsonb not null,
  created_at timestamptz not null default now(),
  primary key (developer_id, agent_id, version),
  foreign key (developer_id, agent_id) references agents(developer_id, id) on delete cascade
);

-- Existing agents: their configuration now is version 1.
insert into agent_versions (developer_id, agent_id, version, config, created_at)
  select a.developer_id, a.id, 1, agent_config(a), a.updated_at from agents a;

-- The version number moves before the row is written (a PUT answers with the new number); concurrent updates of
-- one agent are serialised by the row lock, so numbers never repeat or skip.
create function agents_bump_version() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    new.version := 1;
  elsif agent_config(new) is distinct from agent_config(old) then
    new.version := old.version + 1;
  else
    new.version := old.version;
  end if;
  return new;
end $$;
create trigger agents_bump_version before insert or update on agents
  for each row execute function agents_bump_version();

create function agents_record_version() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.version <> old.version then
    insert into agent_versions (developer_id, agent_id, version, config)
      values (new.developer_id, new.id, new.version, agent_config(new));
  end if;
  return null;
end $$;
create trigger agents_record_version after insert or update on agents
  for each row execute function agents_record_version();

-- Immutable: a version is never changed (it goes only with its agent's row).
create function agent_versions_immutable() returns trigger language plpgsql as $$
begin
  raise exception 'agent versions are immutable' using errcode = 'restrict_violation';
end $$;
create trigger agent_versions_immutable before update on agent_versions
  for each row execute function agent_versions_immutable();

-- The agent version a session ran (null: sessions from before versions).
alter table rt_sessions add column agent_version int;
