/**
 * How the Schedules page words a deployment: a schedule whose instrument no station runs waits
 * for nothing, and must not read as pending on a station.
 */
import { describe, expect, it } from 'vitest';
import type { ScheduleOut } from '../../../shared/harvest/management.js';
import {
  deploymentCell,
  deploymentWords,
  deploysWhen,
} from '../../../renderer/src/server/harvest/deployment.js';

function schedule(station: { id: number; name: string } | null, state: string): ScheduleOut {
  return {
    id: 1,
    instrument_id: 7,
    cron: '0 3 * * *',
    timezone: null,
    enabled: true,
    deployment: {
      station,
      state,
      deployed_at: null,
      last_run_at: null,
      next_run_at: null,
      error: station ? '' : 'instrument 7 has no service account to run it',
      runs: [],
    },
  } as ScheduleOut;
}

describe('a schedule’s deployment in words', () => {
  it('says a schedule on a station waits for it', () => {
    const s = schedule({ id: 2, name: 'tem-pc' }, 'pending');
    expect(deploymentWords(s.deployment)).toBe(
      'pending (the station has not confirmed this version yet)',
    );
    expect(deploymentCell(s.deployment)).toBe('pending');
    expect(deploysWhen(s)).toBe('the station deploys it when it next syncs.');
  });

  it('says no station runs the instrument of one without, instead of pending', () => {
    const s = schedule(null, 'pending');
    expect(deploymentWords(s.deployment)).toBe('not deployed: no station runs its instrument');
    expect(deploymentCell(s.deployment)).toBe('no station');
    expect(deploysWhen(s)).toBe(
      'no station runs its instrument yet: give the instrument a service account to deploy it.',
    );
    expect(deploymentWords(schedule(null, 'removed').deployment)).toBe('removed');
  });
});
