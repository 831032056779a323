import { useId } from 'react';
import type { ReactElement } from 'react';
import { isTestArk } from '../../../../shared/ark.js';
import type { FileOut, TransferOut } from '../../../../shared/harvest/management.js';
import { MetadataTree } from '../../components/MetadataTree.js';
import { formatDateTime } from '../../format.js';
import { formatBytes } from '../../features/harvest/words.js';

/** One file record: its identifier, checksum, origin, metadata and every transfer of it. */
export function FileRecordDetails({
  file,
  instrument,
  transfers,
  transfersTotal,
  onClose,
}: {
  file: FileOut;
  instrument: string;
  /** The latest transfers, oldest first (the server sends up to 1,000). */
  transfers: TransferOut[];
  /** How many the file has in all. */
  transfersTotal: number;
  onClose: () => void;
}): ReactElement {
  const id = useId();
  return (
    <section className="panel file-details" aria-labelledby={`${id}-title`}>
      <div className="history-bar">
        <h2 id={`${id}-title`}>{file.filename}</h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <dl className="details">
        <dt>ARK</dt>
        <dd>
          <code data-testid="file-ark">{file.persistent_id}</code>{' '}
          {isTestArk(file.persistent_id) && (
            <span
              className="tag beside-id"
              title="minted under the test NAAN 99999: it resolves nowhere"
            >
              test identifier
            </span>
          )}
        </dd>
        <dt>Instrument</dt>
        <dd>{instrument}</dd>
        <dt>Checksum</dt>
        <dd>
          <code data-testid="file-checksum">{file.xxhash ?? 'not computed'}</code> (
          {file.hash_algorithm})
        </dd>
        <dt>Size</dt>
        <dd>
          {formatBytes(file.size)} ({file.size.toLocaleString()} bytes)
        </dd>
        <dt>Source path</dt>
        <dd>
          <code>{file.source_path}</code>
        </dd>
        <dt>First discovered</dt>
        <dd>{formatDateTime(file.first_discovered_at)}</dd>
      </dl>
      <h3>Transfer history</h3>
      {transfersTotal > transfers.length && (
        <p className="hint" data-testid="transfers-shown">
          {`The latest ${transfers.length.toLocaleString()} of ${transfersTotal.toLocaleString()} transfers; all of them are in the API: `}
          <code>{`/api/transfers?file_id=${file.id}`}</code>
        </p>
      )}
      {transfers.length === 0 ? (
        <p className="hint">No transfer recorded yet.</p>
      ) : (
        <div className="table-scroll">
          <table aria-label="Transfer history">
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Destination</th>
                <th scope="col">Bytes</th>
                <th scope="col">Checksum verified</th>
                <th scope="col">Started</th>
                <th scope="col">Completed</th>
                <th scope="col">Error or note</th>
              </tr>
            </thead>
            <tbody>
              {transfers.map((t) => (
                <tr key={t.id}>
                  <td>{t.status}</td>
                  <td>
                    <code>{t.destination_path ?? '—'}</code>
                  </td>
                  <td>{t.bytes_transferred.toLocaleString()}</td>
                  <td>{t.checksum_verified ? 'yes' : 'no'}</td>
                  <td>{formatDateTime(t.started_at)}</td>
                  <td>{formatDateTime(t.completed_at)}</td>
                  <td className={t.error ? 'error' : undefined}>{t.error || t.note}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3 id={`${id}-metadata`}>Metadata</h3>
      <section aria-labelledby={`${id}-metadata`}>
        <MetadataTree metadata={file.metadata_} />
      </section>
    </section>
  );
}
