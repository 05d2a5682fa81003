// EngineError lives with the other error classes; engines import it from here.
export * from '../../errors/engine-error.ts';
