/**
 * The task-state words of the wire (spec 3.1 to 3.4), one definition for the
 * reference server that writes them and the client that reads them. The
 * client maps every family onto one normalised vocabulary (http/task.ts);
 * the server maps its internal task states onto each family's words.
 */

/** Envelope-shape TTS jobs, `/speech/tts/jobs` (spec 3.1). Terminal: success, partial_fail, fail. */
export const EnvelopeStatus = { pending: 'pending', processing: 'processing', success: 'success', partialFail: 'partial_fail', fail: 'fail' } as const;
export type EnvelopeStatus = (typeof EnvelopeStatus)[keyof typeof EnvelopeStatus];

/** Flat-shape TTS, ASR and the `/images|videos|lip-sync/tasks` family (spec 3.2). Terminal: succeeded, failed. */
export const FlatStatus = { pending: 'pending', processing: 'processing', succeeded: 'succeeded', failed: 'failed' } as const;
export type FlatStatus = (typeof FlatStatus)[keyof typeof FlatStatus];

/** The minimal async TTS shape's initial state (spec 2.5, 3.2): not terminal. */
export const MinimalStatus = { queued: 'queued' } as const;

/** Media jobs under `/media/...` (spec 3.3, 3.4: the video words, used for image and lip-sync jobs too). */
export const MediaJobStatus = { pending: 'pending', processing: 'processing', completed: 'completed', failed: 'failed' } as const;
export type MediaJobStatus = (typeof MediaJobStatus)[keyof typeof MediaJobStatus];
