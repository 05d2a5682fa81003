-- Agents: ids are client-supplied (1-60 chars) or generated, unique per developer. Another developer may use
-- the same id; nothing about one tenant's ids is visible to another.
create table agents (
  developer_id text not null references developers(id) on delete cascade,
  id text not null check (char_length(id) between 1 and 60),
  -- Insertion order for stable newest-first pages (client ids are not time-sortable).
  seq bigint generated always as identity,
  name text not null,
  description text not null default '',
  system_prompt text not null default '',
  first_message text not null default '',
  voice_id text not null default 'default',
  tts_provider text not null default 'default',
  tts_model text,
  llm_provider text not null default 'openai',
  llm_model text not null,
  collection_id text,
  style_profile jsonb,
  language text not null default 'en',
  temperature double precision not null default 0.7,
  max_tokens int not null default 1024,
  status text not null default 'active' check (status in ('active', 'archived')),
  metadata jsonb not null default '{}',
  -- Custom tools (extension): [{name, description, parameters, url, timeoutMs}].
  tools jsonb not null default '[]',
  -- Standard Webhooks secret signing this agent's custom tool calls.
  tool_secret text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  archived_at timestamptz,
  primary key (developer_id, id)
);
create index agents_active_page on agents (developer_id, seq desc) where status = 'active';

-- Agent instances (extension): personalised context, matched by id or caller phone number.
create table agent_instances (
  developer_id text not null,
  agent_id text not null,
  id text primary key,
  name text not null default '',
  phone_number text,
  context jsonb not null default '{}',
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  foreign key (developer_id, agent_id) references agents(developer_id, id) on delete cascade
);
create unique index agent_instances_phone on agent_instances (developer_id, agent_id, phone_number)
  where phone_number is not null;
create index agent_instances_page on agent_instances (developer_id, agent_id, id desc);

-- Chat conversations and their turns. A turn keeps the user message, the reply and what the tools did.
create table agent_conversations (
  id text primary key,
  developer_id text not null,
  agent_id text not null,
  instance_id text references agent_instances(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (developer_id, agent_id) references agents(developer_id, id) on delete cascade
);
create index agent_conversations_agent on agent_conversations (developer_id, agent_id, id desc);

create table agent_turns (
  conversation_id text not null references agent_conversations(id) on delete cascade,
  turn_index int not null,
  user_message text not null,
  reply text not null,
  tool_calls jsonb not null default '[]',
  input_tokens int not null default 0,
  output_tokens int not null default 0,
  provider text not null,
  model text not null,
  created_at timestamptz not null default now(),
  primary key (conversation_id, turn_index)
);

-- External platform sync: one remote assistant per agent and platform.
create table agent_syncs (
  developer_id text not null,
  agent_id text not null,
  provider text not null,
  external_id text not null,
  synced_at timestamptz not null default now(),
  primary key (developer_id, agent_id, provider),
  foreign key (developer_id, agent_id) references agents(developer_id, id) on delete cascade
);
