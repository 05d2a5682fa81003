-- Agent test runs may be metered (docs/agent-tests.md): a scenario without llm.replies runs on the agent's own
-- vendor LLM at real cost, marked as test traffic. The run says so; each result carries its own mode.
alter table agent_test_runs drop constraint agent_test_runs_mode_check;
alter table agent_test_runs add constraint agent_test_runs_mode_check check (mode in ('offline', 'metered'));
