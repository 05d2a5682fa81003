// Moved to shared/kernel/audio (the agent-test runner speaks flite caller audio); benchmarks keep this path.
export * from '../../shared/kernel/audio/trim-silence.ts';
