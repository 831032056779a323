/**
 * What a person typed into a form not yet sent, kept while they look at another tab (the tabs
 * show one panel at a time, so a form's own state goes when it leaves the screen) and across a
 * reload of the page (kept in the tab's sessionStorage). Keyed by the person and the form;
 * forgotten when the session changes, so the next person at the instrument never sees it, and
 * when the form is sent; kept for the same person's next log-on only when their session ended
 * while the station could not be reached.
 */
import { sessionKey, useSessionStore } from '../../stores/session.js';

const STORAGE_KEY = 'labstation.drafts';

interface Kept {
  owner: string | null;
  drafts: [string, unknown][];
}

/** sessionStorage where there is one (not in unit tests under Node), and it can be read. */
function storage(): Storage | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage;
  } catch {
    return null; // storage turned off for the page
  }
}

function load(): Kept {
  try {
    const text = storage()?.getItem(STORAGE_KEY);
    if (text) return JSON.parse(text) as Kept;
  } catch {
    // Unreadable: start afresh.
  }
  return { owner: null, drafts: [] };
}

const kept = load();
const drafts = new Map<string, unknown>(kept.drafts);
let owner: string | null = kept.owner;

function save(): void {
  try {
    const store = storage();
    if (!store) return;
    if (drafts.size === 0) store.removeItem(STORAGE_KEY);
    else store.setItem(STORAGE_KEY, JSON.stringify({ owner, drafts: [...drafts] } satisfies Kept));
  } catch {
    // Full or refused: the drafts still last while the page is open.
  }
}

/** The owner of drafts kept, between sessions, for a person's next log-on. */
const keptFor = (userId: number): string => `kept-for:${userId}`;

// A reload starts with no session until the station says whose it is: the same session keeps
// its drafts; another, or none (logged off meanwhile), clears them before any form shows. A
// session that ended while the station was away (started again) leaves them to its person's
// next log-on (session.ts reconnected), and to nobody else's.
useSessionStore.subscribe((state, previous) => {
  if (state.session === previous.session) return;
  const key = sessionKey(state.session);
  if (key === owner) return;
  const kept = state.draftsKeptFor;
  if (state.session === null && kept !== null && owner?.startsWith(`${kept}@`)) {
    owner = keptFor(kept);
  } else if (state.session !== null && owner === keptFor(state.session.user.id)) {
    owner = key;
  } else {
    drafts.clear();
    owner = key;
  }
  save();
});

export function readDraft<T>(key: string | undefined): T | undefined {
  return key === undefined ? undefined : (drafts.get(key) as T | undefined);
}

export function writeDraft(key: string | undefined, value: unknown): void {
  if (key === undefined) return;
  drafts.set(key, value);
  save();
}

/** Whether a draft is kept under a key that starts with one of `prefixes`. */
export function hasDrafts(prefixes: string[]): boolean {
  for (const key of drafts.keys()) if (prefixes.some((p) => key.startsWith(p))) return true;
  return false;
}

/** Forgets the drafts whose key starts with `prefix` (a form and its parts). */
export function dropDrafts(prefix: string): void {
  for (const key of [...drafts.keys()]) if (key.startsWith(prefix)) drafts.delete(key);
  save();
}

/**
 * The draft key of a usage's post-usage answers: the Disable form's and the pending form's
 * alike, so a usage force-ended while its form was open keeps what was typed into it.
 */
export const postUsageDraft = (usageUuid: string): string => `post-usage:${usageUuid}`;
