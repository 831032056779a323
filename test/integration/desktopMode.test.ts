/**
 * The desktop app's role on a PC (electron/core/desktop/mode.ts), in plain Node: the stored
 * choice, and the switch to server mode, which needs an admin who can log in afterwards.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DESKTOP_CONFIG,
  desktopPaths,
  readDesktopConfig,
  switchDesktopMode,
} from '../../electron/core/desktop/mode.js';
import { runServer } from '../../electron/core/runServer.js';
import { createLogger } from '../../electron/core/util/log.js';
import { facilityBundle } from '../fixtures/facility.js';
import { tempDir } from './helpers.js';
import { expectCode, openStation } from './stationFixture.js';

describe('desktop mode', () => {
  it('reads a missing or broken choice as a station on port 8080', () => {
    const paths = desktopPaths(tempDir(), {});
    expect(readDesktopConfig(paths.config)).toEqual(DEFAULT_DESKTOP_CONFIG);
    writeFileSync(paths.config, '{ not json');
    expect(readDesktopConfig(paths.config)).toEqual(DEFAULT_DESKTOP_CONFIG);
    writeFileSync(paths.config, JSON.stringify({ mode: 'server', port: 'x' }));
    expect(readDesktopConfig(paths.config)).toEqual({ mode: 'server', port: 8080, network: false });
  });

  it('puts station and server data in their own folders, unless the environment says', () => {
    expect(desktopPaths('/u', {})).toEqual({
      config: '/u/labstation.json',
      stationData: '/u/data',
      serverData: '/u/server-data',
    });
    expect(desktopPaths('/u', { LABSTATION_DATA: '/d' }).stationData).toBe('/d');
  });

  it('switches to server mode only with an admin, who can then log in', async () => {
    const paths = desktopPaths(tempDir(), {});
    await expect(switchDesktopMode(paths, { mode: 'server' })).rejects.toMatchObject({
      code: 'validation_failed',
      message: 'admin_email: a new server needs its first admin',
    });
    await expect(
      switchDesktopMode(paths, {
        mode: 'server',
        admin_email: 'ada@example.org',
        admin_password: 'short',
      }),
    ).rejects.toMatchObject({
      message: 'admin_password: must be at least 10 characters',
      details: { problems: [{ path: ['admin_password'] }] },
    });
    // As a person counts them (five emoji are five characters, ten UTF-16 units), not only
    // spaces, no control characters: each was taken as a first admin's password.
    for (const [password, rule] of [
      ['\u{1F600}'.repeat(5), 'must be at least 10 characters'],
      [' '.repeat(12), 'must not be only spaces'],
      ['\u0000'.repeat(12), 'must not hold control characters (NUL, tab, line break)'],
    ]) {
      await expect(
        switchDesktopMode(paths, {
          mode: 'server',
          admin_email: 'ada@example.org',
          admin_password: password,
        }),
      ).rejects.toMatchObject({ message: `admin_password: ${rule}` });
    }
    expect(readDesktopConfig(paths.config).mode).toBe('station');
    // A port another program holds: refused before anything is recorded (the server would
    // fail at every start after the relaunch, with no window left to switch back from).
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as AddressInfo).port;
    try {
      await expect(
        switchDesktopMode(paths, {
          mode: 'server',
          port: taken,
          admin_email: 'ada@example.org',
          admin_password: 'admin password 1',
        }),
      ).rejects.toMatchObject({
        message: `port: ${taken} is in use by another program; choose another`,
        details: { problems: [{ path: ['port'] }] },
      });
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    expect(readDesktopConfig(paths.config).mode).toBe('station');

    const config = await switchDesktopMode(paths, {
      mode: 'server',
      port: 18_765,
      admin_email: 'ada@example.org',
      admin_password: 'admin password 1',
    });
    expect(config).toEqual({ mode: 'server', port: 18_765, network: false });
    expect(readDesktopConfig(paths.config)).toEqual(config);
    // Switching again needs no new admin: the server has one; and station staff cannot add one.
    await switchDesktopMode(paths, { mode: 'station' });
    await expect(
      switchDesktopMode(paths, {
        mode: 'server',
        admin_email: 'mallory@example.org',
        admin_password: 'mallory password',
      }),
    ).rejects.toMatchObject({ message: /^admin_email: this server has its admins already/ });
    expect(readDesktopConfig(paths.config).mode).toBe('station');
    await switchDesktopMode(paths, { mode: 'server' });

    const server = await runServer({
      dataDir: paths.serverData,
      host: '127.0.0.1',
      port: 0,
      log: createLogger('silent'),
      env: {},
    });
    try {
      const res = await fetch(`${server.url}auth/jwt/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'username=ada%40example.org&password=admin+password+1',
      });
      expect(res.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('answers a switch to station mode, asked of the station, with what is wrong', async () => {
    const paths = desktopPaths(tempDir(), {});
    const st = await openStation(facilityBundle(), Date.now);
    // As electron/main.ts wires it, without the relaunch.
    st.attach({
      desktop: {
        current: () => ({ mode: 'station', port: 8080, network: false }),
        switchTo: async (input) => {
          await switchDesktopMode(paths, input);
        },
      },
    });
    await st.call('session.logon', { login: 'sam', pin: '9999' });
    // It said it was restarting, and nothing happened.
    const error = await expectCode(
      st.call('settings.setDesktopMode', { mode: 'station' }),
      'bad_request',
    );
    expect(error.message).toBe('mode: this app runs as a station already');
    expect(readDesktopConfig(paths.config)).toEqual(DEFAULT_DESKTOP_CONFIG);
    st.close();
  });
});
