-- Deleting a collection detaches it from the agents that used it (they keep working, without the knowledge tool).
update agents a set collection_id = null
 where collection_id is not null and not exists (select 1 from rag_collections c where c.id = a.collection_id);
alter table agents
  add constraint agents_collection_fk foreign key (collection_id) references rag_collections(id) on delete set null;
create index agents_collection on agents (collection_id) where collection_id is not null;
