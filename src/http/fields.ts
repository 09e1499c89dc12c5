/** The tolerant field readers now live with the wire vocabulary (`protocol/fields.ts`); REST code imports them from here. */
export * from '../protocol/fields.js';
