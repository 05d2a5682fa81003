// The mapping lives beside EngineError; kept here for the agent area's imports.
export { engineToApiError } from '../errors/engine-error.ts';
