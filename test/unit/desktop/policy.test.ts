import { describe, expect, it } from 'vitest';
import {
  hardenedWebPreferences,
  isOwnPage,
  isWebLink,
} from '../../../electron/core/desktop/policy.js';

describe('desktop window policy', () => {
  const page = 'app://labstation/index.html';
  const file = 'file:///opt/Labstation/resources/app/dist/renderer/index.html';

  it('lets the station window show its own page only, with any fragment', () => {
    expect(isOwnPage(page, { page })).toBe(true);
    expect(isOwnPage(`${page}#/history`, { page })).toBe(true);
    expect(isOwnPage('app://labstation/index.html?x=1', { page })).toBe(false);
    expect(isOwnPage('app://labstation/', { page })).toBe(false);
    expect(isOwnPage('app://labstation/bench.html', { page })).toBe(false);
    expect(isOwnPage('app://other/index.html', { page })).toBe(false);
    expect(isOwnPage(`${page}.evil.html`, { page })).toBe(false);
    expect(isOwnPage('https://example.org/', { page })).toBe(false);
    expect(isOwnPage('', { page })).toBe(false);
  });

  it('never takes a file:// page for the app, not even the built one', () => {
    expect(isOwnPage(file, { page })).toBe(false);
    expect(isOwnPage(`${file}#/history`, { page })).toBe(false);
    expect(isOwnPage('file:///etc/passwd', { page })).toBe(false);
    expect(isOwnPage('file:///etc/passwd', { origin: 'http://127.0.0.1:8080' })).toBe(false);
  });

  it('lets the server window move within the local server only', () => {
    const origin = 'http://127.0.0.1:8080';
    expect(isOwnPage('http://127.0.0.1:8080/#/admin/users', { origin })).toBe(true);
    expect(isOwnPage('http://127.0.0.1:8081/', { origin })).toBe(false);
    expect(isOwnPage('http://localhost:8080/', { origin })).toBe(false);
    expect(isOwnPage('not a url', { origin })).toBe(false);
    expect(isOwnPage(file, {})).toBe(false);
    expect(isOwnPage(page, { origin })).toBe(false);
  });

  it('sends only http(s) links to the system browser', () => {
    expect(isWebLink('https://nemo.example.org/')).toBe(true);
    expect(isWebLink('HTTP://x.org')).toBe(true);
    expect(isWebLink('file:///etc/passwd')).toBe(false);
    expect(isWebLink('javascript:alert(1)')).toBe(false);
    expect(isWebLink('smb://share/x')).toBe(false);
  });

  it('gives every window a sandboxed, isolated page without Node, the preload only when asked', () => {
    for (const preferences of [
      hardenedWebPreferences(),
      hardenedWebPreferences('/app/preload.cjs'),
    ]) {
      expect(preferences).toMatchObject({
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        nodeIntegrationInSubFrames: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        webviewTag: false,
      });
    }
    expect(hardenedWebPreferences()).not.toHaveProperty('preload');
    expect(hardenedWebPreferences('/app/preload.cjs').preload).toBe('/app/preload.cjs');
  });
});
