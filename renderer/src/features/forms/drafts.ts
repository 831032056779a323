/**
 * What a person typed into a form not yet sent, kept while they look at another tab (the tabs
 * show one panel at a time, so a form's own state goes when it leaves the screen). Keyed by
 * the person and the form; forgotten when the session changes, so the next person at the
 * instrument never sees it, and when the form is sent.
 */
import { useSessionStore } from '../../stores/session.js';

const drafts = new Map<string, unknown>();
let owner: number | null = null;

useSessionStore.subscribe((state) => {
  const user = state.session?.user.id ?? null;
  if (user !== owner) {
    drafts.clear();
    owner = user;
  }
});

export function readDraft<T>(key: string | undefined): T | undefined {
  return key === undefined ? undefined : (drafts.get(key) as T | undefined);
}

export function writeDraft(key: string | undefined, value: unknown): void {
  if (key !== undefined) drafts.set(key, value);
}

/** Forgets the drafts whose key starts with `prefix` (a form and its parts). */
export function dropDrafts(prefix: string): void {
  for (const key of [...drafts.keys()]) if (key.startsWith(prefix)) drafts.delete(key);
}

/**
 * The draft key of a usage's post-usage answers: the Disable form's and the pending form's
 * alike, so a usage force-ended while its form was open keeps what was typed into it.
 */
export const postUsageDraft = (usageUuid: string): string => `post-usage:${usageUuid}`;
