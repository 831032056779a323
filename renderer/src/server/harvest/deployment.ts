import type { ScheduleOut } from '../../../../shared/harvest/management.js';

type Deployment = ScheduleOut['deployment'];

const STATE_WORDS = {
  pending: 'pending (the station has not confirmed this version yet)',
  deployed: 'deployed',
  failed: 'failed',
  removed: 'removed',
} as const;

/** Whether no station runs the schedule's instrument, so nothing deploys it. */
const unassigned = (d: Deployment): boolean => d.station === null && d.state !== 'removed';

/** The deployment's state in words: a schedule no station runs waits for nothing. */
export function deploymentWords(d: Deployment): string {
  return unassigned(d) ? 'not deployed: no station runs its instrument' : STATE_WORDS[d.state];
}

/** The same, short, for the list. */
export function deploymentCell(d: Deployment): string {
  return unassigned(d) ? 'no station' : d.state;
}

/** What happens next to a saved schedule, for the notice after a save. */
export function deploysWhen(schedule: ScheduleOut): string {
  return unassigned(schedule.deployment)
    ? 'no station runs its instrument yet: give the instrument a service account to deploy it.'
    : 'the station deploys it when it next syncs.';
}
