// Moved to shared/kernel/audio (the agent-test caller needs it too); the realtime role keeps this path.
export * from '../../../shared/kernel/audio/mulaw.ts';
