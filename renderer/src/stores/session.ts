import { create } from 'zustand';
import type { PendingForm, SessionInfo } from '../../../shared/api.js';
import { call } from '../bridge.js';
import { readOrder } from '../readOrder.js';

interface SessionState {
  session: SessionInfo | null;
  /** Shown on the log-on screen, e.g. after an idle log-off. */
  notice: string | null;
  restore: () => Promise<void>;
  /**
   * The session read again once the station answers after a time it could not be reached. One
   * that ended meanwhile (the station started again) is said, and what its person typed and did
   * not send is kept for their next log-on (draftsKeptFor).
   */
  reconnected: () => Promise<void>;
  /** The person whose unsent drafts are kept for their next log-on (drafts.ts); else null. */
  draftsKeptFor: number | null;
  /** Throws a BridgeError when the login or PIN is refused. */
  logon: (login: string, pin: string) => Promise<void>;
  logoff: () => Promise<void>;
  /** The core ended the session (idle rule, or another screen logged off). */
  ended: (notice: string | null) => void;
  refreshPending: () => Promise<void>;
  dropPending: (usageId: number) => void;
  setNotice: (notice: string | null) => void;
}

/**
 * Reads of the pending forms (each usage change asks again): an answer asked for before a newer
 * one, before a form was completed here, or for the person before a logoff is not shown.
 */
const pendingReads = readOrder();

/** One log-on of one person (null: nobody logged on): what is kept for a session is keyed by it. */
export const sessionKey = (session: SessionInfo | null): string | null =>
  session === null ? null : `${session.user.id}@${session.started_at}`;

const samePerson = (a: SessionInfo | null, b: SessionInfo | null): boolean =>
  a !== null && sessionKey(a) === sessionKey(b);

/** Said on the log-on form to a person whose session ended while the station was away. */
export const LOGGED_OFF_AWAY =
  'You were logged off while the station could not be reached (started again, or the idle ' +
  'rule). ' +
  'Log on again: what you typed and had not sent is kept for you.';

export const useSessionStore = create<SessionState>()((set, get) => ({
  session: null,
  notice: null,
  draftsKeptFor: null,
  async restore() {
    const { session } = await call('session.current', {});
    set({ session });
  },
  async reconnected() {
    const before = get().session;
    const { session } = await call('session.current', {});
    // Logged off or on meanwhile by someone here: not what this read found.
    if (get().session !== before) return;
    if (before !== null && session === null) {
      set({ session: null, notice: LOGGED_OFF_AWAY, draftsKeptFor: before.user.id });
    } else set({ session });
  },
  async logon(login, pin) {
    const session = await call('session.logon', { login, pin });
    set({ session, notice: null, draftsKeptFor: null });
  },
  async logoff() {
    try {
      await call('session.logoff', {});
    } finally {
      set({ session: null, notice: null, draftsKeptFor: null });
    }
  },
  ended(notice) {
    set({ session: null, notice, draftsKeptFor: null });
  },
  async refreshPending() {
    const readFor = get().session;
    if (!readFor) return;
    const asked = pendingReads.ask();
    const { pending } = await call('usage.pending', {});
    // Onto the session as it is now: the person may have logged off, or another logged on.
    const session = get().session;
    if (!session || !samePerson(session, readFor) || !pendingReads.take(asked)) return;
    set({ session: { ...session, pending } });
  },
  dropPending(usageId) {
    // A list read before this form was completed would bring it back.
    pendingReads.forget();
    const session = get().session;
    if (!session) return;
    const pending: PendingForm[] = session.pending.filter((p) => p.usage.id !== usageId);
    set({ session: { ...session, pending } });
  },
  setNotice(notice) {
    set({ notice });
  },
}));
