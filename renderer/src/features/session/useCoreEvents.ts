import { useEffect } from 'react';
import type { CoreEvent } from '../../../../shared/api.js';
import { getBridge, onEventsReconnected } from '../../bridge.js';
import { useHarvestStore } from '../../stores/harvest.js';
import { useHistoryStore } from '../../stores/history.js';
import { useNotebookStore } from '../../stores/notebook.js';
import { useReservationsStore } from '../../stores/reservations.js';
import { useSessionStore } from '../../stores/session.js';
import { useStationStore } from '../../stores/station.js';
import { useUiStore } from '../../stores/ui.js';
import { readDraft } from '../forms/drafts.js';
import { entryEditingKey } from '../notebook/useEntryDraft.js';

function idleNotice(): string {
  const minutes = useStationStore.getState().info?.idle.logoffMinutes;
  if (!minutes) return 'You were logged off because the station was idle.';
  const [count, unit] = minutes < 1 ? [Math.round(minutes * 60), 'second'] : [minutes, 'minute'];
  const quiet = `${count} ${unit}${count === 1 ? '' : 's'}`;
  return `You were logged off after ${quiet} without activity.`;
}

function onCoreEvent(event: CoreEvent): void {
  const station = useStationStore.getState();
  const session = useSessionStore.getState();
  switch (event.type) {
    case 'tool.changed':
      if (event.tool === station.info?.tool) void station.refreshStatus();
      break;
    case 'usage.changed': {
      void station.refreshStatus();
      const history = useHistoryStore.getState();
      const tool = station.info?.tool;
      if (tool && history.tool && session.session) void history.load(tool);
      if (session.session) void session.refreshPending().catch(() => undefined);
      break;
    }
    case 'harvest.changed':
      // Only for the Data tab on show (it reads everything again when opened): a burst sends
      // a few events a second, each of which would read the status and a page of files.
      if (useUiStore.getState().tab === 'data') void useHarvestStore.getState().refresh();
      break;
    case 'notebook.changed':
      if (!session.session) break;
      void useNotebookStore.getState().refresh();
      // The search results on show too: a renamed entry may match no more, a new one may.
      void useNotebookStore.getState().refreshSearch();
      // The entry on show too, unless it is being edited: its draft stays (a stale save is a
      // conflict, not an overwrite).
      void useNotebookStore
        .getState()
        .reloadOpen(event.entry, (id) => readDraft<boolean>(entryEditingKey(id)) === true);
      break;
    case 'reservations.changed':
      if (useReservationsStore.getState().upcoming) void useReservationsStore.getState().load();
      break;
    case 'session.changed':
      // The list marks the person's own: the next person must not see them as theirs.
      useReservationsStore.getState().clear();
      // What an action said was said to the one before.
      useHarvestStore.setState({ actionError: null, actionNote: null });
      // Files' metadata and the failures' destinations are shown to someone logged on only.
      if (useHarvestStore.getState().status) {
        void useHarvestStore.getState().refresh({ failures: 'reload' });
      }
      if (event.reason === 'idle') session.ended(idleNotice());
      else if (event.reason === 'deactivated') {
        session.ended('You were logged off: your account is no longer active.');
      } else if (event.reason === 'logoff') {
        if (session.session) session.ended(null);
      } else void session.restore().catch(() => undefined);
      break;
  }
}

/** Keeps the screen in step with the core: tool state, usage changes, session changes. */
export function useCoreEvents(): void {
  useEffect(() => {
    const unsubscribe = getBridge().subscribe(onCoreEvent);
    const unwatch = onEventsReconnected(() => {
      void useStationStore.getState().refreshStatus();
      // Said while the station could not be reached, or before it started again: no longer so.
      useHarvestStore.setState({ actionError: null, actionNote: null });
      // What the harvest did while the stream was down came with no event; a station started
      // again has nobody logged on, which the failures' destinations depend on.
      if (useHarvestStore.getState().status) {
        void useHarvestStore.getState().refresh({ failures: 'reload' });
      }
      void useSessionStore
        .getState()
        .reconnected()
        .catch(() => undefined);
    });
    return () => {
      unsubscribe();
      unwatch();
    };
  }, []);
}
