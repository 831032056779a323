import { useCallback, useEffect, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type { ExperimentView } from '../../../../shared/experiment/index.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { errorText } from '../../format.js';
import { toBridgeError } from '../../bridge.js';
import { readOrder } from '../../readOrder.js';
import { serverGet } from '../serverBridge.js';
import { useServerStore } from '../store.js';

const PAGE_SIZE = 20;

interface Page {
  count: number;
  next: string | null;
  previous: string | null;
  results: ExperimentView[];
}

interface ToolName {
  id: number;
  name: string;
}

interface Filters {
  /** The id of the chosen tool, as text; '' for every tool. */
  tool: string;
  from: string;
  to: string;
}

/** A date-time of the browser's zone (YYYY-MM-DDTHH:MM:SS[.sss]) as an instant in UTC. */
function localInstant(text: string): string {
  const ms = new Date(text).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : text;
}

function queryOf(filters: Filters, page: number): string {
  const query = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE) });
  if (filters.tool.trim()) query.set('tool_id', filters.tool.trim());
  // The days of the browser's zone, as the page shows the times: sent as instants, since a
  // date-time without an offset is read in the server's zone.
  if (filters.from) query.set('start__gte', localInstant(`${filters.from}T00:00:00`));
  if (filters.to) query.set('start__lte', localInstant(`${filters.to}T23:59:59.999`));
  return `/api/experiments/?${query.toString()}`;
}

const when = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : 'in progress');

/**
 * Experiment records (staff and admin): for each usage event, what the metadata-harvesting
 * rules of spec 000 make of it, with its samples, the files harvested during it and the
 * notebook experiments linked to it; or why there is no record.
 */
export function ExperimentsPage(): ReactElement {
  const [filters, setFilters] = useState<Filters>({ tool: '', from: '', to: '' });
  const [page, setPage] = useState(1);
  // The filters the list on show was read with: Previous and Next page through that list, not
  // through filters typed since and not yet applied with Show.
  const [shown, setShown] = useState<Filters>({ tool: '', from: '', to: '' });
  const [result, setResult] = useState<Page | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The tools by name for the filter and the cards (GET /api/tools/, which staff may read).
  const [tools, setTools] = useState<ToolName[]>([]);

  useEffect(() => {
    serverGet<{ results: ToolName[] }>('/api/tools/?page_size=1000')
      .then((found) =>
        setTools(
          found.results
            .map(({ id, name }) => ({ id, name }))
            .sort((a, b) => a.name.localeCompare(b.name)),
        ),
      )
      .catch((failure: unknown) => {
        const bridgeError = useServerStore.getState().failed(toBridgeError(failure));
        if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
      });
  }, []);
  const toolNames = new Map(tools.map((tool) => [tool.id, tool.name]));

  // Pages and filters can answer out of order: what was asked for last is what shows.
  const [reads] = useState(readOrder);
  const load = useCallback(
    (next: Filters, at: number) => {
      setError(null);
      const asked = reads.ask();
      serverGet<Page>(queryOf(next, at))
        .then((found) => {
          if (!reads.take(asked)) return;
          setResult(found);
          setPage(at);
          setShown(next);
        })
        .catch((failure: unknown) => {
          // A lapsed login goes back to the login screen (the store); anything else is shown.
          const bridgeError = useServerStore.getState().failed(toBridgeError(failure));
          if (reads.take(asked) && bridgeError.code !== 'unauthenticated') {
            setError(errorText(bridgeError));
          }
        });
    },
    [reads],
  );

  useEffect(() => load({ tool: '', from: '', to: '' }, 1), [load]);

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    load(filters, 1);
  };

  return (
    <main className="experiments-page">
      <form className="panel filters" onSubmit={submit} aria-label="Filter experiments">
        <label>
          Tool
          {/* Labelled by the word alone: the label's text would take the chosen option's too. */}
          <select
            aria-label="Tool"
            value={filters.tool}
            onChange={(e) => setFilters({ ...filters, tool: e.target.value })}
          >
            <option value="">All tools</option>
            {tools.map((tool) => (
              <option key={tool.id} value={String(tool.id)}>
                {tool.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Started from
          <input
            type="date"
            value={filters.from}
            onChange={(e) => setFilters({ ...filters, from: e.target.value })}
          />
        </label>
        <label>
          to
          <input
            type="date"
            value={filters.to}
            onChange={(e) => setFilters({ ...filters, to: e.target.value })}
          />
        </label>
        <button type="submit" className="primary">
          Show
        </button>
      </form>
      {error && <ErrorMessage message={error} />}
      {result && (
        <>
          <p role="status">
            {result.count === 1 ? '1 usage event' : `${result.count} usage events`}
          </p>
          <ol className="experiment-list">
            {result.results.map((experiment) => (
              <li key={experiment.id}>
                <ExperimentCard
                  experiment={experiment}
                  tool={
                    toolNames.get(experiment.usage_event.tool) ??
                    `tool ${experiment.usage_event.tool}`
                  }
                />
              </li>
            ))}
          </ol>
          <div className="actions">
            <button
              type="button"
              className="secondary"
              disabled={!result.previous}
              onClick={() => load(shown, page - 1)}
            >
              Previous
            </button>
            <button
              type="button"
              className="secondary"
              disabled={!result.next}
              onClick={() => load(shown, page + 1)}
            >
              Next
            </button>
          </div>
        </>
      )}
    </main>
  );
}

function ExperimentCard({
  experiment,
  tool,
}: {
  experiment: ExperimentView;
  /** The tool's name (its id when the name is not known). */
  tool: string;
}): ReactElement {
  const { record, usage_event: usage } = experiment;
  return (
    <article className="panel experiment" aria-label={`Usage event ${experiment.id}`}>
      <header>
        <h2>{record ? record.experiment_title : `Usage event ${experiment.id}: no record`}</h2>
        <p className="muted">
          {`Usage event ${usage.id}, ${tool}, ${when(usage.start)} – ${when(usage.end)}`}
        </p>
      </header>
      {record ? (
        <dl className="record">
          <dt>Purpose</dt>
          <dd>{record.experiment_purpose}</dd>
          <dt>Project</dt>
          <dd>{record.project_id}</dd>
          <dt>Consent</dt>
          <dd>{record.data_consent}</dd>
          <dt>From</dt>
          <dd>
            {record.source === 'question_data' && record.reservation
              ? `the answers of reservation ${record.reservation.id}`
              : record.source}
          </dd>
        </dl>
      ) : (
        <p className="notice">{experiment.reason}</p>
      )}
      {record && record.samples.length > 0 && (
        <table className="samples">
          <caption>Samples</caption>
          <thead>
            <tr>
              <th scope="col">Name or PID</th>
              <th scope="col">Kind</th>
              <th scope="col">Details</th>
              <th scope="col">Elements</th>
            </tr>
          </thead>
          <tbody>
            {record.samples.map((sample, index) => (
              <tr key={index}>
                <td>{sample.sample_name}</td>
                <td>{sample.sample_or_pid}</td>
                <td>{sample.sample_details}</td>
                <td>{sample.sample_elements.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {experiment.files.length > 0 && (
        <table className="files">
          <caption>{`Files (${experiment.files.length})`}</caption>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">ARK</th>
              <th scope="col">Bytes</th>
            </tr>
          </thead>
          <tbody>
            {experiment.files.map((file) => (
              <tr key={file.id}>
                <td>{file.filename}</td>
                <td>
                  <code>{file.persistent_id}</code>
                </td>
                <td>{file.size.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {experiment.notebook_entries.length > 0 && (
        <p>
          {'Notebook: '}
          {experiment.notebook_entries.map((entry) => entry.title).join(', ')}
        </p>
      )}
    </article>
  );
}
