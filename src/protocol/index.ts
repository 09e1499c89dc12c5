/** The realtime v2 protocol shared by the client and the reference server. */
export * from './audio.js';
export * from './codec.js';
export * from './constants.js';
export * from './events.js';
export * from './limits.js';
export * from './webhooks.js';
export * from './task-states.js';
