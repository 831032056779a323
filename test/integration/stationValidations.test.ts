/**
 * A station takes validations given by staff on the server (station/serverValidations.ts, the
 * delta's `validations`): its event is validated by the person named, version bumped and queued
 * in one go; the same validation offered again changes nothing; an event validated here keeps
 * who validated it here.
 */
import { describe, expect, it } from 'vitest';
import type { UsageEventView } from '../../shared/api.js';
import { adoptServerValidation } from '../../electron/core/station/serverValidations.js';
import type { Station } from '../../electron/core/station/station.js';
import { facilityBundle, goodPreAnswers } from '../fixtures/facility.js';
import { openStation } from './stationFixture.js';

let now = Date.parse('2026-11-20T09:00:00Z');
const clock = (): number => now;
const at = (): string => new Date(now).toISOString();

interface Stored {
  validated: number;
  validated_by: string | null;
  version: number;
}

function stored(st: Station, usage: UsageEventView): Stored {
  return st.db
    .prepare(
      `SELECT e.validated, v.username AS validated_by, e.version FROM usage_events e
       LEFT JOIN users v ON v.id = e.validated_by_id WHERE e.id = ?`,
    )
    .get(usage.id) as Stored;
}

/** The payloads queued for the server for `usage`, oldest first. */
function queued(st: Station, usage: UsageEventView): Record<string, unknown>[] {
  return (
    st.db
      .prepare(
        "SELECT payload FROM outbox WHERE kind = 'usage_event' AND record_uuid = ? ORDER BY id",
      )
      .pluck()
      .all(usage.uuid) as string[]
  ).map((payload) => JSON.parse(payload) as Record<string, unknown>);
}

const uuidOf = (st: Station, username: string): string =>
  st.db.prepare('SELECT uuid FROM users WHERE username = ?').pluck().get(username) as string;

/** Alice's usage of the SEM, ended, its queued records sent (the outbox emptied). */
async function endedUsage(): Promise<{ st: Station; usage: UsageEventView }> {
  const st = await openStation({ ...facilityBundle(), station: { tool: 'SEM' } }, clock);
  await st.call('session.logon', { login: 'alice', pin: '1234' });
  const { usage } = (await st.call('toolControl.enable', {
    tool: 'SEM',
    project: 'Cathodes',
    answers: goodPreAnswers,
  })) as { usage: UsageEventView };
  now += 60_000;
  await st.call('toolControl.disable', { tool: 'SEM', answers: { problem: 'No' } });
  await st.call('session.logoff', {});
  st.db.prepare('DELETE FROM outbox').run();
  return { st, usage };
}

describe('validations given on the server', () => {
  it('validate the event by the person named, queued with it; offered again, nothing changes', async () => {
    const { st, usage } = await endedUsage();
    const before = stored(st, usage);
    const validation = { usage_uuid: usage.uuid, validated_by_uuid: uuidOf(st, 'sam') };

    expect(adoptServerValidation(st.db, validation, at())).toEqual({ tool: 'SEM' });
    expect(stored(st, usage)).toEqual({
      validated: 1,
      validated_by: 'sam',
      version: before.version + 1,
    });
    expect(queued(st, usage)).toMatchObject([
      { validated: 1, validated_by_uuid: uuidOf(st, 'sam'), version: before.version + 1 },
    ]);

    // The next delta, computed before the station's push arrived, offers it again.
    expect(adoptServerValidation(st.db, validation, at())).toBeNull();
    expect(stored(st, usage).version).toBe(before.version + 1);
    expect(queued(st, usage)).toHaveLength(1);
  });

  it('validate the event by someone this station does not know: validated, by nobody named', async () => {
    const { st, usage } = await endedUsage();
    const unknown = '01900000-0000-7000-8000-0000000beef0';
    expect(
      adoptServerValidation(st.db, { usage_uuid: usage.uuid, validated_by_uuid: unknown }, at()),
    ).toEqual({ tool: 'SEM' });
    expect(stored(st, usage)).toMatchObject({ validated: 1, validated_by: null });
    expect(queued(st, usage)).toMatchObject([{ validated: 1, validated_by_uuid: null }]);
  });

  it('keep who validated the event here; pushed already, it is queued again with a new version', async () => {
    const { st, usage } = await endedUsage();
    await st.call('session.logon', { login: 'sam', pin: '9999' });
    await st.call('toolControl.validate', { usage: usage.id });
    await st.call('session.logoff', {});
    const validatedHere = stored(st, usage);
    const bob = { usage_uuid: usage.uuid, validated_by_uuid: uuidOf(st, 'bob') };

    // Its push still queued: that push tells the server.
    expect(adoptServerValidation(st.db, bob, at())).toBeNull();
    expect(stored(st, usage)).toEqual(validatedHere);

    // Its push sent and crossed by the delta: sent again, newer, still by sam.
    st.db.prepare('DELETE FROM outbox').run();
    expect(adoptServerValidation(st.db, bob, at())).toEqual({ tool: 'SEM' });
    expect(stored(st, usage)).toEqual({
      validated: 1,
      validated_by: 'sam',
      version: validatedHere.version + 1,
    });
    expect(queued(st, usage)).toMatchObject([
      { validated: 1, validated_by_uuid: uuidOf(st, 'sam') },
    ]);
  });

  it('leave an unknown event and an active one alone', async () => {
    const st = await openStation({ ...facilityBundle(), station: { tool: 'SEM' } }, clock);
    const sam = uuidOf(st, 'sam');
    expect(
      adoptServerValidation(
        st.db,
        { usage_uuid: '01900000-0000-7000-8000-00000000f00d', validated_by_uuid: sam },
        at(),
      ),
    ).toBeNull();
    await st.call('session.logon', { login: 'alice', pin: '1234' });
    const { usage } = (await st.call('toolControl.enable', {
      tool: 'SEM',
      project: 'Cathodes',
      answers: goodPreAnswers,
    })) as { usage: UsageEventView };
    const before = stored(st, usage);
    expect(
      adoptServerValidation(st.db, { usage_uuid: usage.uuid, validated_by_uuid: sam }, at()),
    ).toBeNull();
    expect(stored(st, usage)).toEqual(before);
  });
});
