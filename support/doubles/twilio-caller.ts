// Moved into the product (the agent-test runner's caller); tests and benchmarks keep this path.
export * from '../../shared/domains/agent-tests/twilio-caller.ts';
