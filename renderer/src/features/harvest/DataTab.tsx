import { useEffect, useRef, useState } from 'react';
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
import { Failures } from './Failures.js';
import { FILE_DETAILS_ID, FileDetails } from './FileDetails.js';
import { FILES_HEADING_ID, focusLost } from './focus.js';
import { recentRate } from './rate.js';
import { finishing, shownTransfers } from './transferList.js';
import { formatBytes, formatDuration, statusWord } from './words.js';

/** While transfers run, their progress is polled this often; events refresh the rest. */
const PROGRESS_POLL_MS = 1000;
/** Otherwise the overview is read again this often: the last walk, and today's totals at midnight. */
const IDLE_POLL_MS = 30_000;
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
      {/* The group's role on a wrapper: on the <dl> itself it hides its terms from their values. */}
      <div role="group" aria-label="Totals of today, and files waiting">
        <dl className="harvest-totals">
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
      </div>
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
        maxLength={4096}
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
/**
 * The instruments harvested here now, by name, or null while that is not known (the harvest
 * has not started yet, or a harvest elsewhere holds the data dir). None at all is known too:
 * every instrument of the station's tool is turned off, and no failed file is tried.
 */
function harvestedHere(status: HarvestStatus | null): Set<string> | null {
  if (!status) return null;
  if (status.running || (status.started && status.problem === null)) {
    return new Set(status.instruments.map((i) => i.name));
  }
  return null;
}

export function DataTab(): ReactElement {
  const status = useHarvestStore((s) => s.status);
  const files = useHarvestStore((s) => s.files);
  const failed = useHarvestStore((s) => s.failed);
  const error = useHarvestStore((s) => s.error);
  const actionError = useHarvestStore((s) => s.actionError);
  const actionNote = useHarvestStore((s) => s.actionNote);
  const selected = useHarvestStore((s) => s.selected);
  const busy = (status?.active.length ?? 0) > 0 || (status?.settling ?? 0) > 0;

  useEffect(() => {
    // What an action said when the tab was last open is old news now.
    useHarvestStore.setState({ actionError: null, actionNote: null });
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
      <ErrorMessage message={actionError} />
      {actionNote && (
        <p className="notice" role="status">
          {actionNote.text}
        </p>
      )}
      <ErrorMessage message={error} />
      {status && <Overview status={status} />}
      <Failures
        failed={failed}
        total={Math.max(status?.failed ?? 0, failed.length)}
        retriable={status?.retriable ?? 0}
        active={active}
        waiting={waiting}
        harvested={harvestedHere(status)}
      />
      <div className="data-columns">
        <History files={files} />
        {selected && (
          <FileDetails
            file={selected.file}
            transfers={selected.transfers}
            usage={selected.usage}
            withheld={selected.withheld}
          />
        )}
      </div>
    </div>
  );
}
