/**
 * What may be asked of the server's speech engine: `espeak`, `tone`, or
 * `auto` for the best one that works here. Its own module, with no imports,
 * so the CLI can offer the choices without loading an engine.
 */
export const ENGINE_CHOICES = ['espeak', 'tone', 'auto'] as const;
export type EngineChoice = (typeof ENGINE_CHOICES)[number];
