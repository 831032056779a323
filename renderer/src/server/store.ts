import { create } from 'zustand';
import {
  isStaffRole,
  type AccountInfo,
  type ServerPendingForm,
  type UsageEventView,
} from '../../../shared/api.js';
import { toBridgeError, type BridgeError } from '../bridge.js';
import { errorText } from '../format.js';
import { readOrder } from '../readOrder.js';
import { dropDrafts } from '../features/forms/drafts.js';
import { forgetJwt, login, onForbidden, serverCall, storedJwt } from './serverBridge.js';

interface ServerState {
  account: AccountInfo | null;
  /** True until the stored login (if any) has been checked. */
  restoring: boolean;
  pending: ServerPendingForm[];
  events: UsageEventView[];
  /** Everyone's recent usage, for staff and admins to validate (empty for anyone else). */
  recent: UsageEventView[];
  /**
   * Whether `recent` holds only the ended events nobody has validated yet (the person's
   * choice, shown at once; a read that fails puts it back to what the list holds).
   */
  recentToValidate: boolean;
  /** The tool `recent` is narrowed to (null: every tool), as recentToValidate is chosen. */
  recentToolId: number | null;
  /** Every tool, to narrow `recent` to one (empty for anyone but staff and admins). */
  tools: { id: number; name: string }[];
  /** Whether `recent` may go on further back: its last page read was a full one. */
  recentMore: boolean;
  loading: boolean;
  error: string | null;
  /** Shown on the login screen, e.g. why the person was logged out. */
  loginMessage: string | null;
  restore: () => Promise<void>;
  login: (email: string, password: string) => Promise<void>;
  /**
   * Logs out: the person asked (no message; the JWT is ended on the server too), or the server
   * no longer takes the login (`message` says so on the login screen).
   */
  logout: (message?: string) => void;
  /**
   * Reads the lists again; `toValidate` and `toolId`: which facility list (default: the one
   * shown).
   */
  refresh: (toValidate?: boolean, toolId?: number | null) => Promise<void>;
  /** Shows everyone's recent usage, or only what is left to validate; reads it again. */
  showToValidate: (only: boolean) => Promise<void>;
  /** Shows the recent usage of one tool, or of all (null); reads it again. */
  showTool: (toolId: number | null) => Promise<void>;
  /** Adds the next page of `recent`, further back, under the same choices. */
  showOlder: () => Promise<void>;
  /** Shows `usage` as the server now holds it (validated), in every list that has it. */
  took: (usage: UsageEventView) => void;
  /** Handles an error of any call: an expired login goes back to the login screen. */
  failed: (error: unknown) => BridgeError;
  /** Reads the account again (its role may have changed since the login). */
  recheckAccount: () => Promise<void>;
}

/** Reads of the person's usage and pending forms: none read before a logout is shown after it. */
const reads = readOrder();
/**
 * Whose typed answers the drafts hold (features/forms/drafts.ts): the pending forms'
 * (`pending:...`) and the booking form's (`booking:...`), each keyed by the account too.
 */
let draftsOf: number | null = null;
/** The prefixes of the drafts the page keeps for the account logged in. */
const ACCOUNT_DRAFTS = ['pending:', 'booking:'];
/** Forgets what the account logged in typed and did not send (nobody else may see it). */
function dropAccountDrafts(): void {
  for (const prefix of ACCOUNT_DRAFTS) dropDrafts(prefix);
}

/** Whether the `recent` shown holds only the events left to validate (see recentToValidate). */
let listedToValidate = false;
/** The tool the `recent` shown is narrowed to (see recentToolId). */
let listedToolId: number | null = null;
/** How many events of everyone's usage a read asks for: a page. */
export const RECENT_PAGE = 50;
/** The most a refresh asks for to keep the older pages shown (usage.recent's largest limit). */
export const RECENT_KEPT_MAX = 500;
/**
 * Which `recent` is shown: a read that replaces it (or a logout) makes it another. An older
 * page goes only onto the list it was read after, and says nothing once that list is gone.
 */
let recentGeneration = 0;
/** The `recentGeneration` whose older page is being read (one at a time), or null. */
let olderOf: number | null = null;

/** usage.recent's arguments for these choices. */
function recentArgs(
  toValidate: boolean,
  toolId: number | null,
  limit = RECENT_PAGE,
): { to_validate: boolean; tool_id?: number; limit: number } {
  return {
    to_validate: toValidate,
    ...(toolId === null ? {} : { tool_id: toolId }),
    limit,
  };
}

/**
 * How many events a read of everyone's usage under these choices asks for: a page, or, when
 * the list shown has the same choices and older pages, as many pages as it shows (up to
 * RECENT_KEPT_MAX), so that a refresh (after a form is answered, say) keeps them.
 */
function recentLimit(toValidate: boolean, toolId: number | null, shown: number): number {
  if (toValidate !== listedToValidate || toolId !== listedToolId) return RECENT_PAGE;
  const pages = Math.max(1, Math.ceil(shown / RECENT_PAGE));
  return Math.min(pages * RECENT_PAGE, RECENT_KEPT_MAX);
}

const logoutResets: (() => void)[] = [];

/**
 * Registers what a store of the page clears at a logout: the lists it holds, and its reads
 * under way (readOrder's `forget`), so that nothing read for one person is shown to whoever
 * logs in next in this tab, not even until their own reads come back.
 */
export function onLogout(reset: () => void): void {
  logoutResets.push(reset);
}

export const useServerStore = create<ServerState>((set, get) => ({
  account: null,
  restoring: true,
  pending: [],
  events: [],
  recent: [],
  recentToValidate: false,
  recentToolId: null,
  tools: [],
  recentMore: false,
  loading: false,
  error: null,
  loginMessage: null,

  async restore() {
    if (!storedJwt()) {
      set({ restoring: false });
      return;
    }
    try {
      const { account } = await serverCall('account.me', {});
      draftsOf = account.id;
      set({ account, restoring: false });
      await get().refresh();
    } catch (error) {
      get().failed(error);
      set({ restoring: false });
    }
  },

  async login(email, password) {
    await login(email, password);
    const { account } = await serverCall('account.me', {});
    // Answers typed before a login ended wait for the same person only.
    if (account.id !== draftsOf) dropAccountDrafts();
    draftsOf = account.id;
    set({ account, loginMessage: null, error: null });
    await get().refresh();
  },

  logout(message) {
    // A message says why the server ended the login; a login still good is ended there too.
    forgetJwt(message === undefined);
    // Logged out by themselves: what they typed goes. Ended by the server: it waits for them.
    if (message === undefined) dropAccountDrafts();
    reads.forget();
    listedToValidate = false;
    listedToolId = null;
    recentGeneration += 1;
    for (const reset of logoutResets) reset();
    set({
      account: null,
      pending: [],
      events: [],
      recent: [],
      recentToValidate: false,
      recentToolId: null,
      tools: [],
      recentMore: false,
      error: null,
      loginMessage: message ?? null,
    });
  },

  async refresh(toValidate = get().recentToValidate, toolId = get().recentToolId) {
    const asked = reads.ask();
    set({ loading: true, error: null });
    // Everyone's usage and the tools, for staff: a refusal (a role taken away meanwhile) leaves
    // the rest; any other failure fails the read (an empty list would say nothing is left to
    // validate).
    const staff = isStaffRole(get().account?.role);
    const forStaff = <T>(read: () => Promise<T>, none: T): Promise<T> =>
      staff
        ? read().catch((error: unknown) => {
            if (toBridgeError(error).code !== 'forbidden') throw error;
            return none;
          })
        : Promise.resolve(none);
    const limit = recentLimit(toValidate, toolId, get().recent.length);
    try {
      const [{ pending }, { events }, { events: recent }, { tools }] = await Promise.all([
        serverCall('usage.pendingMine', {}),
        serverCall('usage.mine', {}),
        forStaff(() => serverCall('usage.recent', recentArgs(toValidate, toolId, limit)), {
          events: [],
        }),
        forStaff(() => serverCall('usage.tools', {}), { tools: [] }),
      ]);
      if (reads.take(asked)) {
        listedToValidate = toValidate;
        listedToolId = toolId;
        recentGeneration += 1;
        set({
          pending,
          events,
          recent,
          tools,
          recentToValidate: toValidate,
          recentToolId: toolId,
          recentMore: recent.length === limit,
          loading: !reads.isLatest(asked),
        });
      }
    } catch (error) {
      const err = get().failed(error);
      if (!reads.take(asked)) return;
      const shown = err.code === 'unauthenticated' ? null : errorText(err);
      set({
        loading: !reads.isLatest(asked),
        error: shown,
        recentToValidate: listedToValidate,
        recentToolId: listedToolId,
      });
    }
  },

  async showToValidate(only) {
    set({ recentToValidate: only });
    await get().refresh(only);
  },

  async showTool(toolId) {
    set({ recentToolId: toolId });
    await get().refresh(get().recentToValidate, toolId);
  },

  async showOlder() {
    const last = get().recent.at(-1);
    const generation = recentGeneration;
    if (olderOf === generation || !last || !get().recentMore) return;
    olderOf = generation;
    try {
      // The list's own choices, not one just made and still being read.
      const { events } = await serverCall('usage.recent', {
        ...recentArgs(listedToValidate, listedToolId),
        before_id: last.id,
      });
      if (generation !== recentGeneration) return;
      // An event whose start a station moved meanwhile could come again: shown once.
      const now = get().recent;
      const shown = new Set(now.map((e) => e.id));
      set({
        recent: [...now, ...events.filter((e) => !shown.has(e.id))],
        recentMore: events.length === RECENT_PAGE,
      });
    } catch (error) {
      // Of a list no longer shown (another person's, perhaps): nothing to say.
      if (generation !== recentGeneration) return;
      const err = get().failed(error);
      if (err.code !== 'unauthenticated') set({ error: errorText(err) });
    } finally {
      if (olderOf === generation) olderOf = null;
    }
  },

  took(usage) {
    const swap = (list: UsageEventView[]): UsageEventView[] =>
      list.map((e) => (e.uuid === usage.uuid ? usage : e));
    set((s) => ({ events: swap(s.events), recent: swap(s.recent) }));
  },

  failed(error) {
    const err = toBridgeError(error);
    if (err.code === 'unauthenticated') get().logout('Your login has ended. Log in again.');
    return err;
  },

  async recheckAccount() {
    const before = get().account;
    if (before === null || recheckingAccount) return;
    recheckingAccount = true;
    try {
      const { account } = await serverCall('account.me', {});
      // Still the same login (not logged out or another person meanwhile): its role as now.
      if (get().account?.id === account.id) set({ account });
    } catch (error) {
      get().failed(error);
    } finally {
      recheckingAccount = false;
    }
  },
}));

/** A read of the account under way (recheckAccount): the refusals of one page load share it. */
let recheckingAccount = false;

// A call refused 403: the role the page was built for may be gone (an admin demoted to staff
// kept the Administration link, each of whose calls failed).
onForbidden(() => void useServerStore.getState().recheckAccount());
