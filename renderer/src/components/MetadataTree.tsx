import { Fragment, type ReactElement, type ReactNode } from 'react';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A file's `metadata_` as it reads: each part (what a hook added: `file_info`,
 * `usage_context`, a sidecar's fields, `hook_errors`) a list of names and values, nested as
 * the data is, with the JSON itself a click away for copying. Names stay as stored, and each
 * one's dotted path (`file_info.mime_type`) is its tooltip: that is what the Files page's
 * metadata search and the harvest API take (names inside lists have none: they take no index).
 */
export function MetadataTree({ metadata }: { metadata: Record<string, unknown> }): ReactElement {
  if (Object.keys(metadata).length === 0) {
    return (
      <p className="notice" data-testid="file-metadata">
        No metadata: no post-transfer hook has added any to this file.
      </p>
    );
  }
  // A part that holds fields (what a hook added) under a heading of its name, using the width;
  // the values of their own (a sidecar's or a command's fields, hook_errors) together under one
  // of their own after them, not read as the last part's.
  const entries = Object.entries(metadata);
  const isPart = ([, value]: [string, unknown]): boolean =>
    isRecord(value) && Object.keys(value).length > 0;
  const parts = entries.filter(isPart);
  const loose = entries.filter((entry) => !isPart(entry));
  return (
    <div className="metadata-view" data-testid="file-metadata">
      {parts.map(([name, value]) => (
        <Fragment key={name}>
          <h4 className="metadata-part" title={name}>
            {name}
          </h4>
          <Entries record={value as Record<string, unknown>} path={`${name}.`} />
        </Fragment>
      ))}
      {loose.length > 0 && parts.length > 0 && <h4 className="metadata-part">Other fields</h4>}
      {loose.length > 0 && <Entries record={Object.fromEntries(loose)} path="" />}
      <details className="metadata-json">
        <summary>As JSON</summary>
        <pre>{JSON.stringify(metadata, null, 2)}</pre>
      </details>
    </div>
  );
}

/** `path`: the dotted path of `record` with its dot (`file_info.`), null inside a list. */
function Entries({
  record,
  path,
}: {
  record: Record<string, unknown>;
  path: string | null;
}): ReactElement {
  return (
    <dl className="metadata-tree">
      {Object.entries(record).map(([name, value]) => (
        <Fragment key={name}>
          <dt title={path === null ? undefined : `${path}${name}`}>{name}</dt>
          <dd>{valueOf(value, path === null ? null : `${path}${name}.`)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

function valueOf(value: unknown, path: string | null): ReactNode {
  if (value === null || value === undefined) return <span className="muted">none</span>;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') {
    return value === '' ? <span className="muted">empty</span> : value;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none</span>;
    return (
      <ol className="metadata-items">
        {value.map((item, i) => (
          <li key={i}>{valueOf(item, null)}</li>
        ))}
      </ol>
    );
  }
  if (isRecord(value)) {
    if (Object.keys(value).length === 0) return <span className="muted">none</span>;
    return <Entries record={value} path={path} />;
  }
  // Numbers; JSON holds nothing else.
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}
