import { useCallback, useEffect, useRef, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type {
  ActiveTransfer,
  HarvestFileView,
  HarvestStatus,
  SettlingFile,
} from '../../../../shared/api.js';
import { arkCheckProblem } from '../../../../shared/ark.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { formatDateTime } from '../../format.js';
import { useHarvestStore } from '../../stores/harvest.js';
import { useSessionStore } from '../../stores/session.js';
import { FILE_DETAILS_ID, FileDetails } from './FileDetails.js';
import { recentRate } from './rate.js';
import { finishing, shownTransfers } from './transferList.js';
import { formatBytes, formatDuration, nextTryWords, statusWord } from './words.js';

/** While transfers run, their progress is polled this often; events refresh the rest. */
const PROGRESS_POLL_MS = 1000;
/** Otherwise the overview is read again this often: the last walk, and today's totals at midnight. */
const IDLE_POLL_MS = 30_000;
/** Where the focus goes when what held it is gone: the files' heading. */
export const FILES_HEADING_ID = 'harvest-files-heading';

/** The focus is nowhere the person can use: on the page, or on a button disabled under it. */
function focusLost(): boolean {
  const at = document.activeElement;
  return (
    at === null ||
    at === document.body ||
    !at.isConnected ||
    (at instanceof HTMLButtonElement && at.disabled)
  );
}

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

function TransferProgress({ transfer }: { transfer: ActiveTransfer }): ReactElement {
  const samples = useHarvestStore((s) => s.progress.get(transfer.file_id));
  const { rate, secondsLeft } = recentRate(transfer, samples);
  const name = transfer.relative_path;
  const label = `${name}: ${formatBytes(transfer.bytes_done)} of ${formatBytes(transfer.bytes_total)}`;
  return (
    <li className="transfer-progress">
      <div className="transfer-line">
        <strong className="file-name">{name}</strong>
        <span>
          {formatBytes(transfer.bytes_done)} / {formatBytes(transfer.bytes_total)}
          {finishing(transfer) ? (
            ' · checking the copy'
          ) : (
            <>
              {rate > 0 && ` · ${formatBytes(rate)}/s`}
              {secondsLeft !== null && ` · ${formatDuration(secondsLeft)} left`}
            </>
          )}
        </span>
      </div>
      <progress
        aria-label={label}
        max={Math.max(transfer.bytes_total, 1)}
        value={transfer.bytes_done}
      />
    </li>
  );
}

function Overview({ status }: { status: HarvestStatus }): ReactElement {
  const loggedOn = useSessionStore((s) => s.session !== null);
  const transfers = shownTransfers(status.active);
  return (
    <section aria-label="Harvest overview" className="harvest-overview">
      {status.ark.test && (
        <p className="notice" role="note">
          Test identifiers: this station mints ARKs under the test authority ark:
          {status.ark.naan}/{status.ark.shoulder} (NAAN 99999), which resolve nowhere. Set the
          facility's NAAN and shoulder in its bundle (<code>"ark"</code>).
        </p>
      )}
      {status.running && (
        <p className="history-bar">
          <span>
            Last walk of the folders: {formatDateTime(status.last_scan_at) || 'under way'}
          </span>
          <button
            type="button"
            className="secondary"
            disabled={!loggedOn}
            title={loggedOn ? undefined : 'Log on to ask for a walk of the folders'}
            onClick={() => void useHarvestStore.getState().rescan()}
          >
            Look for new files now
          </button>
        </p>
      )}
      {status.problem && <ErrorMessage message={`Not harvesting: ${status.problem}`} />}
      {!status.running && !status.problem && status.instruments.length === 0 && (
        <p className="notice">No instrument of this station's tool is set up for harvest.</p>
      )}
      <ul className="instrument-list">
        {status.instruments.map((i) => (
          <li key={i.name}>
            <strong>{i.name}</strong>: watches {i.watch.join(', ')} → {i.storage ?? 'no storage'}
            {i.problem && <ErrorMessage message={i.problem} />}
          </li>
        ))}
      </ul>
      <dl className="harvest-totals" role="group" aria-label="Totals of today, and files waiting">
        <div>
          <dt>Completed today</dt>
          <dd data-testid="today-completed">{status.today.completed}</dd>
        </div>
        <div>
          <dt>Skipped today</dt>
          <dd data-testid="today-skipped">{status.today.skipped}</dd>
        </div>
        <div>
          <dt>Failed today</dt>
          <dd data-testid="today-failed">{status.today.failed}</dd>
        </div>
        <div>
          <dt>Copied today</dt>
          <dd>{formatBytes(status.today.bytes)}</dd>
        </div>
        <div>
          <dt>Settling</dt>
          <dd title="found, waiting until the file stops changing">{status.settling}</dd>
        </div>
        <div>
          <dt>Queued</dt>
          <dd>{status.queued}</dd>
        </div>
      </dl>
      {status.settling_files.length > 0 && (
        <SettlingList files={status.settling_files} total={status.settling} />
      )}
      {status.active.length > 0 && (
        <ul className="transfer-list" aria-label="Transfers under way">
          {transfers.shown.map((t) => (
            <TransferProgress key={t.file_id} transfer={t} />
          ))}
          {transfers.more > 0 && (
            <li data-testid="transfers-more">
              and {transfers.more.toLocaleString()} more file{transfers.more === 1 ? '' : 's'} under
              way
            </li>
          )}
        </ul>
      )}
    </section>
  );
}

/**
 * The files found and not yet stable that changed last: a big file being written shows here,
 * with its size so far, from its first write on, before any transfer starts.
 */
function SettlingList({ files, total }: { files: SettlingFile[]; total: number }): ReactElement {
  const now = Date.now();
  return (
    <ul className="settling-list" aria-label="Files being written">
      {files.map((f) => (
        <li key={`${f.instrument}/${f.relative_path}`} title={f.instrument}>
          <span className="file-name">{f.relative_path}</span>
          {` · ${formatBytes(f.size)} · `}
          {f.open_error
            ? `cannot be opened yet (${f.open_error})`
            : `changed ${formatDuration(Math.max((now - Date.parse(f.changed_at)) / 1000, 0))} ago`}
        </li>
      ))}
      {total > files.length && (
        <li data-testid="settling-more">
          and {(total - files.length).toLocaleString()} more settling
        </li>
      )}
    </ul>
  );
}

function Failures({
  failed,
  total,
  retriable,
  active,
  waiting,
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
        {failed.map((f, i) => (
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
                const ids = [...failed.slice(i), ...failed.slice(0, i).reverse()].map((g) => g.id);
                keepFocus(ids);
                void retry(f.id);
              }}
              disabled={
                !loggedOn || retrying.has(f.id) || active.has(f.id) || waiting.has(f.instrument)
              }
              aria-label={`Retry ${f.relative_path}`}
            >
              Retry
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Narrows the list to a name or path, or finds the file of an ARK. */
function FileSearch(): ReactElement {
  const search = useHarvestStore((s) => s.search);
  const setSearch = useHarvestStore((s) => s.setSearch);
  const [text, setText] = useState(search);
  const field = useRef<HTMLInputElement>(null);
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    void setSearch(text);
  };
  return (
    <form className="file-search" role="search" onSubmit={submit}>
      <label htmlFor="file-search">Find a file (name, path or ARK)</label>
      <input
        ref={field}
        id="file-search"
        type="search"
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit">Find</button>
      {search && (
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setText('');
            // This button goes with the search: the focus would drop to the page's start.
            field.current?.focus();
            void setSearch('');
          }}
        >
          Show all files
        </button>
      )}
    </form>
  );
}

/** For an ARK that found nothing: why it may be mistyped (see arkCheckProblem), or nothing. */
function checkProblem(search: string): string {
  const problem = arkCheckProblem(search);
  return problem === null ? '' : `: ${problem}`;
}

function History({ files }: { files: HarvestFileView[] }): ReactElement {
  const select = useHarvestStore((s) => s.select);
  const selected = useHarvestStore((s) => s.selected?.file.id ?? null);
  const more = useHarvestStore((s) => s.more);
  const loadMore = useHarvestStore((s) => s.loadMore);
  const search = useHarvestStore((s) => s.search);
  const searching = useHarvestStore((s) => s.searching);
  return (
    <section aria-label="Harvested files">
      <h2 id={FILES_HEADING_ID} tabIndex={-1}>
        Files
      </h2>
      <FileSearch />
      {files.length === 0 ? (
        <p>
          {searching
            ? 'Searching…'
            : search
              ? `No file matches "${search}"${checkProblem(search)}.`
              : 'No files yet.'}
        </p>
      ) : (
        // Focusable: in a narrow window the columns past the file's name are reached by
        // scrolling it sideways, which the keyboard can do only from the scroller itself.
        <div className="table-scroll" tabIndex={0} role="region" aria-label="Files table">
          <table>
            <thead>
              <tr>
                <th>File</th>
                <th>Status</th>
                <th>Checksum</th>
                <th>Size</th>
                <th>ARK</th>
                <th>First seen</th>
              </tr>
            </thead>
            <tbody>
              {files.map((f) => (
                <tr
                  key={f.id}
                  className={f.id === selected ? 'selected' : undefined}
                  aria-current={f.id === selected || undefined}
                >
                  <td>
                    <button
                      type="button"
                      className="link file-name"
                      data-file={f.id}
                      onClick={() => {
                        // To its details, which come after the whole list.
                        void select(f.id).then(() =>
                          window.setTimeout(() => {
                            if (useHarvestStore.getState().selected?.file.id !== f.id) return;
                            document.getElementById(FILE_DETAILS_ID)?.focus();
                          }, 0),
                        );
                      }}
                    >
                      {f.relative_path}
                    </button>
                  </td>
                  <td>{statusWord(f)}</td>
                  <td>
                    {f.last_transfer?.checksum_verified ? '✓ verified ' : ''}
                    <code title={f.xxhash ?? ''}>{f.xxhash ? f.xxhash.slice(0, 12) : '—'}</code>
                  </td>
                  <td>{formatBytes(f.size)}</td>
                  <td>
                    <code>{f.persistent_id}</code>
                    {/* Apart from the ARK, and not selectable: a copied ARK is the ARK alone. */}
                    {f.test_identifier && (
                      <>
                        {' '}
                        <span className="tag beside-id">test</span>
                      </>
                    )}
                  </td>
                  <td>{formatDateTime(f.first_discovered_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {more && (
        <button
          type="button"
          className="secondary"
          onClick={() => {
            const shown = files.length;
            void loadMore().then(() =>
              window.setTimeout(() => {
                // The last page came: the button went with the focus on it. The focus goes
                // to the first file of that page, where the person reads on.
                if (!focusLost()) return;
                const first =
                  document.querySelectorAll<HTMLButtonElement>('button[data-file]')[shown];
                first?.focus();
              }, 0),
            );
          }}
        >
          Older files
        </button>
      )}
    </section>
  );
}

/** The station's harvest: queue and progress, today's totals, failures, files and their ARKs. */
export function DataTab(): ReactElement {
  const status = useHarvestStore((s) => s.status);
  const files = useHarvestStore((s) => s.files);
  const failed = useHarvestStore((s) => s.failed);
  const error = useHarvestStore((s) => s.error);
  const selected = useHarvestStore((s) => s.selected);
  const busy = (status?.active.length ?? 0) > 0 || (status?.settling ?? 0) > 0;

  useEffect(() => {
    void useHarvestStore.getState().refresh({ failures: 'reload' });
  }, []);

  useEffect(() => {
    const timer = setInterval(
      () => void useHarvestStore.getState().refreshStatus(),
      busy ? PROGRESS_POLL_MS : IDLE_POLL_MS,
    );
    return () => clearInterval(timer);
  }, [busy]);
  const active = new Set(status?.active.map((t) => t.file_id));
  const waiting = new Set(
    status?.instruments.filter((i) => i.waiting_for_history).map((i) => i.name),
  );

  return (
    <div className="data-tab">
      <ErrorMessage message={error} />
      {status && <Overview status={status} />}
      <Failures
        failed={failed}
        total={Math.max(status?.failed ?? 0, failed.length)}
        retriable={status?.retriable ?? 0}
        active={active}
        waiting={waiting}
      />
      <div className="data-columns">
        <History files={files} />
        {selected && (
          <FileDetails file={selected.file} transfers={selected.transfers} usage={selected.usage} />
        )}
      </div>
    </div>
  );
}
