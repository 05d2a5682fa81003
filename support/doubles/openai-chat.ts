// Moved into the product (the agent-test runner's simulated vendors); tests and benchmarks keep this path.
export * from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
