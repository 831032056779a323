import { useRef } from 'react';
import type { KeyboardEvent, ReactElement } from 'react';
import type { Tab } from '../stores/ui.js';
import { useUiStore } from '../stores/ui.js';

interface TabSpec {
  id: Tab;
  label: string;
  render: () => ReactElement;
}

/** WAI-ARIA tabs: arrow keys, Home and End move between tabs; Tab goes into the panel. */
export function Tabs({ tabs, active }: { tabs: TabSpec[]; active: Tab }): ReactElement {
  const setTab = useUiStore((s) => s.setTab);
  const refs = useRef(new Map<Tab, HTMLButtonElement>());
  const current = tabs.find((t) => t.id === active) ?? tabs[0];

  const onKeyDown = (e: KeyboardEvent): void => {
    const index = tabs.findIndex((t) => t.id === current?.id);
    const next =
      e.key === 'ArrowRight'
        ? (index + 1) % tabs.length
        : e.key === 'ArrowLeft'
          ? (index - 1 + tabs.length) % tabs.length
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? tabs.length - 1
              : -1;
    const tab = tabs[next];
    if (!tab) return;
    e.preventDefault();
    setTab(tab.id);
    refs.current.get(tab.id)?.focus();
  };

  // The views and their tabs are the page's main landmark. The panel is a div inside it: a
  // tabpanel role on <main> itself takes the landmark away, and leaves the tabs outside any.
  return (
    <main>
      {tabs.length > 1 && (
        <div className="tabs" role="tablist" aria-label="Station views" onKeyDown={onKeyDown}>
          {tabs.map((t) => (
            <button
              key={t.id}
              ref={(el) => {
                if (el) refs.current.set(t.id, el);
                else refs.current.delete(t.id);
              }}
              id={`tab-${t.id}`}
              type="button"
              role="tab"
              aria-selected={t.id === current?.id}
              aria-controls={`panel-${t.id}`}
              tabIndex={t.id === current?.id ? 0 : -1}
              onClick={() => setTab(t.id)}
            >
              {t.label}
            </button>
          ))}
        </div>
      )}
      {current && (
        <div
          id={`panel-${current.id}`}
          role={tabs.length > 1 ? 'tabpanel' : undefined}
          aria-labelledby={tabs.length > 1 ? `tab-${current.id}` : undefined}
        >
          {current.render()}
        </div>
      )}
    </main>
  );
}
