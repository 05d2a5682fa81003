-- The STT engine whose final made a caller turn, on calls whose STT can fall back to another engine mid-call
-- (shared/engines/stt/fallback.ts): the session's own provider, or the fallback's ("default", the local
-- recogniser). Null on other calls and on earlier rows: the session's stt_provider heard them all.
alter table rt_turns add column if not exists stt_engine text;
