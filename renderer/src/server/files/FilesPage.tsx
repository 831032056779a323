import { useCallback, useEffect, useId, useState } from 'react';
import type { ReactElement } from 'react';
import type { ServerApiArgs, ServerApiResult } from '../../../../shared/api.js';
import type { Envelope, FileOut } from '../../../../shared/harvest/management.js';
import { harvestRecordSchemas, type InstrumentName } from '../../../../shared/harvestAdminApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { toBridgeError } from '../../bridge.js';
import { errorText, formatDateTime } from '../../format.js';
import { formatBytes } from '../../features/harvest/words.js';
import { readOrder } from '../../readOrder.js';
import { SelectControl, TextControl } from '../harvest/formFields.js';
import { useResourceForm } from '../harvest/useResourceForm.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';
import { FileRecordDetails } from './FileRecordDetails.js';

const PAGE_SIZE = 25;
type FileQuery = ServerApiArgs<'files.list'>;

const blank = (text: string): string | undefined => (text.trim() === '' ? undefined : text.trim());

/**
 * The harvested files a person may read: an admin every instrument's, anyone else those of the
 * instruments granted to them. Filtered by instrument, name, ARK or a metadata value; paged.
 */
export function FilesPage(): ReactElement {
  const id = useId();
  const isAdmin = useServerStore((s) => s.account?.role === 'admin');
  const [instruments, setInstruments] = useState<InstrumentName[] | null>(null);
  const [query, setQuery] = useState<FileQuery>({ page: 1, size: PAGE_SIZE });
  const [result, setResult] = useState<Envelope<FileOut> | null>(null);
  const [open, setOpen] = useState<ServerApiResult<'files.get'> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useResourceForm({
    instrument_id: '',
    filename: '',
    persistent_id: '',
    metadata_key: '',
    metadata_value: '',
  });
  const v = form.values;

  const fail = useCallback((err: unknown): void => {
    const bridgeError = useServerStore.getState().failed(toBridgeError(err));
    if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
  }, []);

  useEffect(() => {
    serverCall('files.instruments', {})
      .then((r) => setInstruments(r.instruments))
      .catch(fail);
  }, [fail]);

  // Pages and searches can answer out of order, and so can the details of two files clicked one
  // after the other: what was asked for last is what shows.
  const [lists] = useState(readOrder);
  const [details] = useState(readOrder);

  /** Reads one page; a refused filter shows at its field. */
  const read = (next: FileQuery): void => {
    setError(null);
    // The server refuses a value without a key too, but names its parameter (metadata_value);
    // the form says it in the words of its own labels.
    const keyless =
      next.metadata_value !== undefined && next.metadata_value !== '' && !next.metadata_key
        ? [{ path: ['metadata_key'], message: 'is needed to search by a metadata value' }]
        : [];
    void form.submit(
      harvestRecordSchemas['files.list'],
      next,
      async (parsed) => {
        const asked = lists.ask();
        const page = await serverCall('files.list', parsed);
        if (!lists.take(asked)) return;
        setResult(page);
        setQuery(parsed);
      },
      keyless,
    );
  };

  useEffect(() => {
    const asked = lists.ask();
    serverCall('files.list', { page: 1, size: PAGE_SIZE })
      .then((page) => lists.take(asked) && setResult(page))
      .catch(fail);
  }, [fail, lists]);

  const search = (): void =>
    read({
      page: 1,
      size: PAGE_SIZE,
      instrument_id: v.instrument_id === '' ? undefined : Number(v.instrument_id),
      filename: blank(v.filename),
      persistent_id: blank(v.persistent_id),
      metadata_key: blank(v.metadata_key),
      metadata_value: v.metadata_value === '' ? undefined : v.metadata_value,
    });

  const show = (fileId: number): void => {
    setError(null);
    const asked = details.ask();
    serverCall('files.get', { id: fileId })
      .then((detail) => {
        if (!details.take(asked)) return;
        setOpen(detail);
        window.setTimeout(() => document.getElementById(`${id}-details`)?.focus(), 0);
      })
      .catch(fail);
  };

  const names = new Map((instruments ?? []).map((i) => [i.id, i.name]));
  const nameOf = (instrumentId: number): string =>
    names.get(instrumentId) ?? `instrument ${instrumentId}`;
  const page = result?.page ?? 1;
  const pages = result ? Math.max(1, Math.ceil(result.total / result.size)) : 1;

  return (
    <main className="admin-stack">
      <form
        className="panel filters"
        noValidate
        aria-label="Filter files"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          search();
        }}
      >
        <SelectControl
          form={form}
          path="instrument_id"
          label="Instrument"
          value={v.instrument_id}
          onChange={(value) => form.set('instrument_id', value)}
          options={[
            { value: '', label: isAdmin ? 'All instruments' : 'All my instruments' },
            ...(instruments ?? []).map((i) => ({ value: String(i.id), label: i.name })),
          ]}
        />
        <TextControl
          form={form}
          path="filename"
          label="File name"
          value={v.filename}
          onChange={(value) => form.set('filename', value)}
        />
        <TextControl
          form={form}
          path="persistent_id"
          label="ARK"
          code
          value={v.persistent_id}
          onChange={(value) => form.set('persistent_id', value)}
        />
        <TextControl
          form={form}
          path="metadata_key"
          label="Metadata key"
          code
          value={v.metadata_key}
          onChange={(value) => form.set('metadata_key', value)}
        />
        <TextControl
          form={form}
          path="metadata_value"
          label="Metadata value"
          value={v.metadata_value}
          onChange={(value) => form.set('metadata_value', value)}
        />
        <div className="actions">
          <button type="submit" className="primary" disabled={form.busy}>
            Search
          </button>
        </div>
        <p className="help files-help">
          File name and ARK match exactly. A metadata key is dotted for nesting
          (file_info.mime_type); with a value, files whose metadata has that value there.
        </p>
      </form>
      <ErrorMessage message={form.formError ?? error} />
      {instruments?.length === 0 && !isAdmin && (
        <p className="notice">
          No instrument&apos;s files are shared with you yet. An admin can grant you access.
        </p>
      )}
      <section className="panel" aria-labelledby={`${id}-title`}>
        <div className="history-bar">
          <h2 id={`${id}-title`}>Files</h2>
          {result && (
            <p role="status" data-testid="files-count">
              {`${result.total} file${result.total === 1 ? '' : 's'} · page ${page} of ${pages}`}
            </p>
          )}
        </div>
        {!result && !error && <p role="status">Loading…</p>}
        {result?.items.length === 0 && <p className="hint">No files match.</p>}
        {result && result.items.length > 0 && (
          <div className="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">File</th>
                  <th scope="col">Instrument</th>
                  <th scope="col">ARK</th>
                  <th scope="col">Size</th>
                  <th scope="col">First discovered</th>
                </tr>
              </thead>
              <tbody>
                {result.items.map((f) => (
                  <tr key={f.id} aria-current={open?.file.id === f.id || undefined}>
                    <th scope="row">
                      <button
                        type="button"
                        className="link-button"
                        aria-label={`Details of ${f.filename}`}
                        onClick={() => show(f.id)}
                      >
                        {f.filename}
                      </button>
                    </th>
                    <td>{nameOf(f.instrument_id)}</td>
                    <td className="code">{f.persistent_id}</td>
                    <td>{formatBytes(f.size)}</td>
                    <td>{formatDateTime(f.first_discovered_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {result && pages > 1 && (
          <nav className="actions" aria-label="Pages of files">
            <button
              type="button"
              className="secondary"
              disabled={page <= 1 || form.busy}
              onClick={() => read({ ...query, page: page - 1 })}
            >
              Previous page
            </button>
            <button
              type="button"
              className="secondary"
              disabled={page >= pages || form.busy}
              onClick={() => read({ ...query, page: page + 1 })}
            >
              Next page
            </button>
          </nav>
        )}
      </section>
      {open && (
        <div id={`${id}-details`} tabIndex={-1}>
          <FileRecordDetails
            file={open.file}
            instrument={nameOf(open.file.instrument_id)}
            transfers={open.transfers}
            transfersTotal={open.transfers_total}
            onClose={() => setOpen(null)}
          />
        </div>
      )}
    </main>
  );
}
