// Experiment records built by the metadata-harvesting rules of spec 000 ("Conventions of a
// metadata-harvesting consumer"). Pure TypeScript: no Node, DOM or Electron.

export { buildExperimentRecord } from './build.js';
export { readConsent, type Consent } from './consent.js';
export { readSource, type SourceFields, type SourceRead } from './read.js';
export { matchReservation, type MatchOptions } from './reservation.js';
export * from './types.js';
export {
  isIsoDateTime,
  reservationInputSchema,
  reservationListSchema,
  usageEventInputSchema,
} from './input.js';
