/**
 * The log-on at a station (electron/core/station/logon.ts): a rule a hand-mutation review
 * found held by no other test.
 */
import { describe, expect, it } from 'vitest';
import type { Station } from '../../electron/core/station/station.js';
import { facilityBundle } from '../fixtures/facility.js';
import { expectCode, openStation } from './stationFixture.js';

const clock = (): number => Date.parse('2026-11-20T09:00:00Z');

async function station(): Promise<Station> {
  return openStation(facilityBundle(), clock);
}

describe('log-on', () => {
  // Mutation: checkLogon keeping the count of wrong PINs after a right one.
  it('counts only wrong PINs in a row: a right one starts the count again', async () => {
    const st = await station();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) {
        await expectCode(
          st.call('session.logon', { login: 'alice', pin: '0000' }),
          'unauthenticated',
        );
      }
      await st.call('session.logon', { login: 'alice', pin: '1234' });
      await st.call('session.logoff', {});
    }
    expect(st.db.prepare('SELECT login_key FROM login_failures').all()).toEqual([]);
  });
});
