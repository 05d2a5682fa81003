-- A suspected cut-in (issue 25): the caller went on speaking within 500 ms after this reply's first audio (or
-- was already speaking again when it started), so the agent most likely took a pause for the end of the turn.
alter table rt_turns add column suspected_cut_in boolean not null default false;
