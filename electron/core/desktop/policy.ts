/**
 * What the desktop window may load: its own page (the station UI at app://labstation/index.html,
 * desktop/appScheme.ts, or the server UI from its loopback origin), nothing else. A file:// URL
 * is never the app's page. Links to the web open in the system browser.
 */
export function isOwnPage(url: string, own: { page?: string; origin?: string }): boolean {
  if (own.page !== undefined) {
    // The station UI is one page; its routes live in the fragment.
    return url.split('#')[0] === own.page;
  }
  if (own.origin !== undefined) {
    try {
      return new URL(url).origin === own.origin;
    } catch {
      return false;
    }
  }
  return false;
}

/** http(s) links leave the app for the system browser; every other scheme is dropped. */
export function isWebLink(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** Electron's WebPreferences, the part we set (core runs in plain Node: no electron import). */
export interface HardenedWebPreferences {
  preload?: string;
  contextIsolation: true;
  sandbox: true;
  nodeIntegration: false;
  nodeIntegrationInWorker: false;
  nodeIntegrationInSubFrames: false;
  webSecurity: true;
  allowRunningInsecureContent: false;
  webviewTag: false;
  spellcheck: false;
}

/**
 * The window's web preferences, hardened the same in both modes (Electron's security
 * checklist): the page runs sandboxed, isolated from the preload's world, without Node, with
 * the same-origin policy on and no insecure content. Only the station's window gets a preload.
 */
export function hardenedWebPreferences(preload?: string): HardenedWebPreferences {
  return {
    ...(preload === undefined ? {} : { preload }),
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    spellcheck: false,
  };
}
