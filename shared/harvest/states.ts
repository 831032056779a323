/** The states of a harvested file and the statuses of its transfers (spec 002), without zod. */

/** A transfer's outcome (spec 002): completed and skipped are verified; failed is retried. */
export const TRANSFER_STATUSES = ['completed', 'skipped', 'failed'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/**
 * A harvested file's state at its station: waiting (for its transfer), failed (retried later),
 * done (completed or skipped), gone (its source removed before it was taken).
 */
export const FILE_STATES = ['waiting', 'failed', 'done', 'gone'] as const;
export type FileState = (typeof FILE_STATES)[number];
