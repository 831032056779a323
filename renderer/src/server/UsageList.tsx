import type { ReactElement } from 'react';
import type { UsageEventView } from '../../../shared/api.js';
import { formatDateTime } from '../format.js';

function stateOf(event: UsageEventView): string {
  if (event.end === null) return 'In use';
  if (event.post_usage_pending) return 'Questions pending';
  return event.validated ? 'Validated' : 'Done';
}

/** The person's recent usage events, newest first. */
export function UsageList({ events }: { events: UsageEventView[] }): ReactElement {
  return (
    <section className="panel usage-list" aria-labelledby="usage-title">
      <h2 id="usage-title">My recent usage</h2>
      {events.length === 0 ? (
        <p className="hint">No usage recorded yet.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Project</th>
                <th scope="col">Start</th>
                <th scope="col">End</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.uuid}>
                  <td>{event.tool_name}</td>
                  <td>{event.project_name}</td>
                  <td>{formatDateTime(event.start)}</td>
                  <td>{formatDateTime(event.end)}</td>
                  <td>
                    {event.post_usage_pending ? (
                      <a href={`#/pending/${event.uuid}`}>{stateOf(event)}</a>
                    ) : (
                      stateOf(event)
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
