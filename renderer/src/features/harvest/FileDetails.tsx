import type { ReactElement } from 'react';
import type {
  FileUsageView,
  HarvestFileView,
  HarvestTransferView,
} from '../../../../shared/api.js';
import { MetadataTree } from '../../components/MetadataTree.js';
import { formatDateTime } from '../../format.js';
import { useHarvestStore } from '../../stores/harvest.js';
import { useSessionStore } from '../../stores/session.js';
import { FILES_HEADING_ID } from './focus.js';
import { formatBytes } from './words.js';

/** The details' element, which the focus goes to when a file is opened from the list. */
export const FILE_DETAILS_ID = 'harvest-file-details';

/** Back to the file in the list once its details close, else to the files' heading. */
function focusFileInList(id: number): void {
  window.setTimeout(() => {
    const button = document.querySelector<HTMLElement>(`button[data-file="${id}"]`);
    (button ?? document.getElementById(FILES_HEADING_ID))?.focus();
  }, 0);
}

/** One file: its identifier, where it came from and went, every attempt, and its metadata. */
export function FileDetails({
  file,
  transfers,
  usage,
  withheld,
}: {
  file: HarvestFileView;
  transfers: HarvestTransferView[];
  /** The usage during which it was first seen (for staff and the person whose usage it was). */
  usage: FileUsageView | null;
  /** Made during another person's usage: its usage and metadata are theirs and staff's. */
  withheld: boolean;
}): ReactElement {
  const select = useHarvestStore((s) => s.select);
  const loggedOn = useSessionStore((s) => s.session !== null);
  return (
    <section
      id={FILE_DETAILS_ID}
      tabIndex={-1}
      className="file-details"
      aria-label={`File ${file.filename}`}
    >
      <div className="history-bar">
        <h2 className="file-name">{file.filename}</h2>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            void select(null);
            focusFileInList(file.id);
          }}
        >
          Close
        </button>
      </div>
      <dl className="details">
        <dt>ARK</dt>
        <dd>
          <code data-testid="file-ark">{file.persistent_id}</code>{' '}
          {file.test_identifier && (
            <span className="tag beside-id" title="minted under NAAN 99999: resolves nowhere">
              test identifier
            </span>
          )}
        </dd>
        <dt>Instrument</dt>
        <dd>{file.instrument}</dd>
        <dt>Source</dt>
        <dd>
          <code>{file.source_path}</code>
        </dd>
        <dt>Size</dt>
        <dd>
          {formatBytes(file.size)} ({file.size.toLocaleString()} bytes)
        </dd>
        <dt>Checksum</dt>
        <dd>
          <code>{file.xxhash ?? '—'}</code> ({file.hash_algorithm})
        </dd>
        <dt>First seen</dt>
        <dd>{formatDateTime(file.first_discovered_at)}</dd>
        <dt>Usage</dt>
        <dd data-testid="file-usage">
          {!loggedOn ? (
            'log on to see'
          ) : withheld ? (
            "another person's: for them and for staff to see"
          ) : usage !== null ? (
            <>
              {usage.user_name}, project {usage.project_name}: {formatDateTime(usage.start)} to{' '}
              {usage.end !== null
                ? formatDateTime(usage.end)
                : usage.elsewhere
                  ? 'an end the server did not know yet'
                  : 'now (in progress)'}
              {usage.elsewhere && ' (on another station, as the server recorded it)'}
            </>
          ) : (
            'none active when the file was first seen'
          )}
        </dd>
      </dl>
      <h3>Transfers</h3>
      <ul className="transfer-history">
        {transfers.map((t) => (
          <li key={t.id}>
            <strong>{t.status}</strong>
            {t.checksum_verified && ' ✓ checksum verified'} — {formatDateTime(t.started_at)}
            {t.destination_path && (
              <>
                {' '}
                → <code>{t.destination_path}</code>
              </>
            )}
            {t.error && <div className="error">{t.error}</div>}
            {t.note && <div>{t.note}</div>}
          </li>
        ))}
      </ul>
      <h3>Metadata</h3>
      {loggedOn && withheld ? (
        <p className="notice">
          Made during another person's usage: its metadata, which names them and their answers, is
          for them and for staff to see.
        </p>
      ) : loggedOn ? (
        <MetadataTree metadata={file.metadata_} />
      ) : (
        <p className="notice">
          Log on to see the file's metadata: it names who made it and the usage's answers.
        </p>
      )}
    </section>
  );
}
