import { create } from 'zustand';
import type { PendingForm, SessionInfo } from '../../../shared/api.js';
import { call } from '../bridge.js';

interface SessionState {
  session: SessionInfo | null;
  /** Shown on the log-on screen, e.g. after an idle log-off. */
  notice: string | null;
  restore: () => Promise<void>;
  /** Throws a BridgeError when the login or PIN is refused. */
  logon: (login: string, pin: string) => Promise<void>;
  logoff: () => Promise<void>;
  /** The core ended the session (idle rule, or another screen logged off). */
  ended: (notice: string | null) => void;
  refreshPending: () => Promise<void>;
  dropPending: (usageId: number) => void;
  setNotice: (notice: string | null) => void;
}

export const useSessionStore = create<SessionState>()((set, get) => ({
  session: null,
  notice: null,
  async restore() {
    const { session } = await call('session.current', {});
    set({ session });
  },
  async logon(login, pin) {
    const session = await call('session.logon', { login, pin });
    set({ session, notice: null });
  },
  async logoff() {
    try {
      await call('session.logoff', {});
    } finally {
      set({ session: null, notice: null });
    }
  },
  ended(notice) {
    set({ session: null, notice });
  },
  async refreshPending() {
    const session = get().session;
    if (!session) return;
    const { pending } = await call('usage.pending', {});
    set({ session: { ...session, pending } });
  },
  dropPending(usageId) {
    const session = get().session;
    if (!session) return;
    const pending: PendingForm[] = session.pending.filter((p) => p.usage.id !== usageId);
    set({ session: { ...session, pending } });
  },
  setNotice(notice) {
    set({ notice });
  },
}));
