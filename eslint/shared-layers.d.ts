import type { Rule } from 'eslint';

/** The layers of shared/, bottom first (see shared-layers.js). */
export declare const LAYERS: readonly string[];
export declare function layerOf(path: string): number;
export declare const sharedLayers: Rule.RuleModule;
declare const plugin: { rules: Record<string, Rule.RuleModule> };
export default plugin;
