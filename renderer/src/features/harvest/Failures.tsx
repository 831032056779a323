/**
 * The Data tab's failed transfers: each with its reason, where it was going, its attempts and
 * next try, and a Retry; Retry all for those the harvest would take. The focus follows a Retry
 * (useFocusAfterRetry).
 */
import { useCallback, useEffect, useRef } from 'react';
import type { ReactElement } from 'react';
import type { HarvestFileView } from '../../../../shared/api.js';
import { useHarvestStore } from '../../stores/harvest.js';
import { useSessionStore } from '../../stores/session.js';
import { FILES_HEADING_ID, focusLost } from './focus.js';
import { nextTryWords } from './words.js';

/**
 * After a Retry, whose button is disabled while it runs and removed once its file is done, the
 * page drops the focus (a screen reader starts again from the top, the Tab key from the end).
 * From a Retry on, until the person moves the focus elsewhere, a focus dropped goes to the first
 * of the files retried whose Retry is there and enabled, else to the files' heading. A Retry
 * that is there but busy (its file being retried or copied: data-busy) is waited for, not
 * passed over: its file may fail again (a share still away), and then its Retry is where the
 * person was; only once it is done does the focus go on to the next file. After Retry all
 * ('all', first), the focus goes back to Retry all while it is there: its files failed again.
 */
function useFocusAfterRetry(): (ids: readonly (number | 'all')[]) => void {
  const keeping = useRef<readonly (number | 'all')[] | null>(null);
  /** What the focus was on when this took it over (the Retry pressed), or last put it on. */
  const placed = useRef<Element | null>(null);
  const keep = useCallback((): void => {
    const ids = keeping.current;
    if (ids === null) return;
    const lost = focusLost();
    if (!lost && document.activeElement !== placed.current) {
      // Moved on by the person (not to what this put it on): theirs stands from now on.
      keeping.current = null;
      return;
    }
    for (const id of ids) {
      const button = document.querySelector<HTMLButtonElement>(`button[data-retry="${id}"]`);
      if (button && !button.disabled) {
        // Also from a later one this put it on: Retry all is disabled, and not busy, while
        // its files wait in the queue, whose Retry stays enabled; once they failed again, it
        // is Retry all that the person pressed.
        if (button !== document.activeElement) button.focus();
        placed.current = button;
        return;
      }
      // Its attempt is under way: the render that ends it runs this again.
      if (button?.hasAttribute('data-busy')) return;
    }
    if (!lost) return;
    // Where it ends: from here on, the focus is the person's again.
    document.getElementById(FILES_HEADING_ID)?.focus();
    keeping.current = null;
  }, []);
  // After every render of the list: a file done, retried again, another one failing.
  useEffect(keep);
  return useCallback(
    (ids) => {
      keeping.current = ids;
      placed.current = document.activeElement;
      // The button is disabled by the render that follows; the browser drops the focus then.
      window.setTimeout(keep, 0);
    },
    [keep],
  );
}

export function Failures({
  failed,
  total,
  retriable,
  active,
  waiting,
  harvested,
}: {
  /** The failed files listed: the newest MOST of them. */
  failed: HarvestFileView[];
  /** How many files are failed in all. */
  total: number;
  /** How many of them Retry all takes (HarvestStatus.retriable). */
  retriable: number;
  active: ReadonlySet<number>;
  /** Instruments waiting for their history: their files are not tried before it is here. */
  waiting: ReadonlySet<string>;
  /**
   * The instruments harvested here, while the harvest runs (null: not known now): the files of
   * another are not tried, by a Retry either.
   */
  harvested: ReadonlySet<string> | null;
}): ReactElement | null {
  const retry = useHarvestStore((s) => s.retry);
  const retrying = useHarvestStore((s) => s.retrying);
  const retryAll = useHarvestStore((s) => s.retryAll);
  const retryingAll = useHarvestStore((s) => s.retryingAll);
  const loggedOn = useSessionStore((s) => s.session !== null);
  const keepFocus = useFocusAfterRetry();
  if (!failed.length) return null;
  const now = Date.now();
  return (
    <section aria-label="Failed transfers">
      <h2>Failed transfers</h2>
      {total > failed.length && (
        <p className="notice" data-testid="failed-shown">
          The newest {failed.length.toLocaleString()} of {total.toLocaleString()} failed files.
        </p>
      )}
      {failed.length > 1 && (
        <button
          type="button"
          data-retry="all"
          data-busy={retryingAll ? '' : undefined}
          onClick={() => {
            // Back here if they fail again; else to the files' Retry, then the heading.
            keepFocus(['all', ...failed.map((f) => f.id)]);
            void retryAll();
          }}
          disabled={!loggedOn || retryingAll || retriable === 0}
        >
          Retry all ({retriable})
        </button>
      )}
      {!loggedOn && <p className="notice">Log on to retry a transfer now.</p>}
      <ul className="failure-list">
        {failed.map((f, i) => {
          const notHarvested = harvested !== null && !harvested.has(f.instrument);
          return (
            <li key={f.id}>
              <div>
                <strong className="file-name">{f.relative_path}</strong> —{' '}
                {f.last_transfer?.error || 'failed'}
                <br />
                <small>
                  {/* A reason such as "disk full" says "the storage location": which one. One
                    that failed before a location was chosen (its watched folder gone, a hook)
                    still names its instrument. */}
                  {f.instrument}
                  {f.last_transfer?.storage_location && (
                    <>
                      {' '}
                      → {f.last_transfer.storage_location}
                      {f.last_transfer.destination_path && (
                        <>
                          {' '}
                          (<span className="file-name">{f.last_transfer.destination_path}</span>)
                        </>
                      )}
                    </>
                  )}
                  ; {f.attempts} attempt{f.attempts === 1 ? '' : 's'}
                  {nextTryWords(f, {
                    active: active.has(f.id),
                    waitingForHistory: waiting.has(f.instrument),
                    notHarvested,
                    now,
                  })}
                </small>
              </div>
              <button
                type="button"
                data-retry={f.id}
                data-busy={retrying.has(f.id) || active.has(f.id) ? '' : undefined}
                onClick={() => {
                  // This file again if it failed again, else the next one down, else up.
                  const ids = [...failed.slice(i), ...failed.slice(0, i).reverse()].map(
                    (g) => g.id,
                  );
                  keepFocus(ids);
                  void retry(f.id);
                }}
                disabled={
                  !loggedOn ||
                  retrying.has(f.id) ||
                  active.has(f.id) ||
                  waiting.has(f.instrument) ||
                  notHarvested
                }
                aria-label={`Retry ${f.relative_path}`}
              >
                Retry
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
