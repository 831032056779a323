import { useEffect } from 'react';
import type { ReactElement } from 'react';
import { useHistoryStore } from '../stores/history.js';
import { useNotebookStore } from '../stores/notebook.js';
import { useSessionStore } from '../stores/session.js';
import { useStaffStore } from '../stores/staff.js';
import { useStationStore } from '../stores/station.js';
import { useUiStore } from '../stores/ui.js';
import { DataTab } from '../features/harvest/DataTab.js';
import { HistoryTab } from '../features/history/HistoryTab.js';
import { NotebookTab } from '../features/notebook/NotebookTab.js';
import { ReservationsTab } from '../features/reservations/ReservationsTab.js';
import { SettingsTab } from '../features/settings/SettingsTab.js';
import { SessionBar } from '../features/session/SessionBar.js';
import { SyncBadge } from '../features/sync/SyncBadge.js';
import { useActivityTouch } from '../features/session/useActivityTouch.js';
import { useCoreEvents } from '../features/session/useCoreEvents.js';
import { ToolControlTab } from '../features/tool-control/ToolControlTab.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { UnreachableNotice } from '../components/UnreachableNotice.js';
import { Tabs } from './Tabs.js';

export function App(): ReactElement {
  const info = useStationStore((s) => s.info);
  const status = useStationStore((s) => s.status);
  const loadError = useStationStore((s) => s.loadError);
  const loggedOn = useSessionStore((s) => s.session !== null);
  const isStaff = useSessionStore((s) => s.session?.user.is_staff ?? false);
  const tab = useUiStore((s) => s.tab);
  const keypad = useUiStore((s) => s.keypad);
  const toggleKeypad = useUiStore((s) => s.toggleKeypad);

  useCoreEvents();
  useActivityTouch();

  useEffect(() => {
    void useStationStore.getState().load();
    void useSessionStore
      .getState()
      .restore()
      .catch(() => undefined);
  }, []);

  // Whatever the last person left open goes when they log off.
  useEffect(() => {
    if (loggedOn) return;
    useUiStore.getState().setTab('control');
    useHistoryStore.getState().clear();
    useStaffStore.getState().reset();
    useNotebookStore.getState().clear();
  }, [loggedOn]);

  const tool = info?.tool ?? null;
  return (
    <div className="app">
      <header className="app-header">
        <div>
          <p className="eyebrow">Labstation</p>
          <h1>{status?.tool.name ?? tool ?? 'Station'}</h1>
        </div>
        <div className="header-actions">
          <SyncBadge />
          <button type="button" className="secondary" aria-pressed={keypad} onClick={toggleKeypad}>
            On-screen keypad
          </button>
          <SessionBar />
        </div>
      </header>
      <UnreachableNotice />
      <ErrorMessage message={loadError} />
      {info && !tool && (
        <p className="notice">
          This station controls no tool yet. Import a facility bundle that names the station's tool.
        </p>
      )}
      {tool && (
        <Tabs
          tabs={[
            { id: 'control', label: 'Tool control', render: () => <ToolControlTab /> },
            {
              id: 'reservations' as const,
              label: 'Reservations',
              render: () => <ReservationsTab tool={tool} />,
            },
            ...(loggedOn
              ? [
                  {
                    id: 'history' as const,
                    label: 'Usage data history',
                    render: () => <HistoryTab tool={tool} />,
                  },
                  { id: 'notebook' as const, label: 'Notebook', render: () => <NotebookTab /> },
                ]
              : []),
            { id: 'data' as const, label: 'Data', render: () => <DataTab /> },
            ...(isStaff
              ? [{ id: 'settings' as const, label: 'Settings', render: () => <SettingsTab /> }]
              : []),
          ]}
          active={tab}
        />
      )}
    </div>
  );
}
