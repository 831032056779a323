import { useRef } from 'react';
import type { ReactElement } from 'react';
import { DEFAULT_EXCLUDE } from '../../../../shared/harvest/glob.js';
import { Messages } from '../../features/forms/FieldFrame.js';
import { TextControl, type FieldHost } from './formFields.js';

/** One watched folder as the form holds it: globs one per line. */
export interface WatchRow {
  /** React's key: rows move when one above is removed. */
  key: number;
  path: string;
  include: string;
  exclude: string;
}

export const watchRows = (
  watch: { path: string; include: string[]; exclude: string[] }[],
  nextKey: () => number,
): WatchRow[] =>
  watch.map((w) => ({
    key: nextKey(),
    path: w.path,
    include: w.include.join('\n'),
    exclude: w.exclude.join('\n'),
  }));

/** The folders an instrument's station watches, each with its include and exclude globs. */
export function WatchFolders({
  form,
  rows,
  onChange,
}: {
  form: FieldHost;
  rows: WatchRow[];
  onChange: (rows: WatchRow[]) => void;
}): ReactElement {
  const next = useRef(1_000_000);
  const id = form.id('watch');
  const messages = form.messages('watch');
  const change = (index: number, patch: Partial<WatchRow>): void =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <fieldset
      id={id}
      tabIndex={-1}
      className={messages.length ? 'field watch-folders invalid' : 'field watch-folders'}
      aria-describedby={messages.length ? `${id}-messages` : undefined}
    >
      <legend>Watched folders</legend>
      {rows.length === 0 && <p className="hint">None: the station harvests nothing yet.</p>}
      {rows.map((row, index) => (
        <fieldset key={row.key} className="watch-folder">
          <legend>{`Watched folder ${index + 1}`}</legend>
          <TextControl
            form={form}
            path={`watch.${index}.path`}
            label="Folder path"
            hint="Absolute, on the station: /data/tem or D:\Data."
            code
            value={row.path}
            onChange={(path) => change(index, { path })}
          />
          <div className="field-grid">
            <TextControl
              form={form}
              path={`watch.${index}.include`}
              label="Include globs"
              hint="One per line, e.g. *.dm4 or **/*.tif. None: every file."
              code
              rows={3}
              value={row.include}
              onChange={(include) => change(index, { include })}
            />
            <TextControl
              form={form}
              path={`watch.${index}.exclude`}
              label="Exclude globs"
              hint="One per line; these win over include."
              code
              rows={3}
              value={row.exclude}
              onChange={(exclude) => change(index, { exclude })}
            />
          </div>
          <div className="actions">
            <button
              type="button"
              className="secondary"
              aria-label={`Remove watched folder ${index + 1}`}
              onClick={() => onChange(rows.filter((_, i) => i !== index))}
            >
              Remove folder
            </button>
          </div>
        </fieldset>
      ))}
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            onChange([
              ...rows,
              { key: next.current++, path: '', include: '', exclude: DEFAULT_EXCLUDE.join('\n') },
            ])
          }
        >
          Add a watched folder
        </button>
      </div>
      <Messages id={`${id}-messages`} messages={messages} />
    </fieldset>
  );
}
