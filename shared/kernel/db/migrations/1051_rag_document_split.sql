-- How a document was split into chunks (issue #33): `entries` (a Markdown or Q&A document, one chunk per heading or
-- question, the heading embedded with its answer) or `size` (paragraphs and sentences up to chunkSize). Documents
-- ingested before this column were all split by size.
alter table rag_documents add column split text not null default 'size' check (split in ('size', 'entries'));
