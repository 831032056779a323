import type { ReactElement } from 'react';
import { displayMainText, groupedFields } from '../../../../shared/metadata/index.js';
import type { MetadataDoc } from '../../../../shared/metadata/index.js';
import type { NotebookEntryView } from '../../../../shared/notebookApi.js';
import { formatDateTime } from '../../format.js';
import { FieldValueView } from './FieldValueView.js';
import { fieldLabel, KIND_LABELS } from './words.js';

/** View mode: title, tags, main text (unless hidden), the fields in their groups. */
export function EntryView({
  entry,
  doc,
}: {
  entry: NotebookEntryView;
  doc: MetadataDoc;
}): ReactElement {
  return (
    <div className="entry-view">
      <p className="eyebrow">
        {KIND_LABELS[entry.kind]} · version {entry.version} · changed{' '}
        {formatDateTime(entry.updated_at)}
      </p>
      {/* Focusable from code only: a new copy's panel takes the focus here (EntryPanel). */}
      <h2 id="entry-title" tabIndex={-1}>
        {entry.title}
      </h2>
      {entry.tags.length > 0 && (
        <ul className="tag-list" aria-label="Tags">
          {entry.tags.map((tag) => (
            <li key={tag} className="tag">
              {tag}
            </li>
          ))}
        </ul>
      )}
      {entry.usage_event && (
        <p className="hint" data-testid="entry-usage">
          Linked to the usage of {entry.usage_event.tool} from{' '}
          {formatDateTime(entry.usage_event.start)}
        </p>
      )}
      {displayMainText(doc) && entry.body.trim() !== '' && (
        <div className="main-text" aria-label="Main text">
          {entry.body}
        </div>
      )}
      {groupedFields(doc).map((section) => (
        <section
          key={section.group ? `group-${section.group.id}` : 'ungrouped'}
          className="field-section"
          aria-label={section.group ? section.group.name : 'Fields'}
        >
          {section.group && <h3>{section.group.name}</h3>}
          {section.fields.length === 0 ? (
            <p className="hint">No fields in this group.</p>
          ) : (
            <dl className="field-values">
              {section.fields.map((field) => (
                <div key={field.name} data-field={field.name}>
                  <dt className={field.name === '' ? 'unnamed' : undefined}>
                    {fieldLabel(field.name)}
                    {field.required === true && (
                      <span className="required-mark" aria-label="required">
                        {' '}
                        *
                      </span>
                    )}
                  </dt>
                  <dd>
                    <FieldValueView field={field} />
                    {field.description && <p className="help">{field.description}</p>}
                  </dd>
                </div>
              ))}
            </dl>
          )}
        </section>
      ))}
    </div>
  );
}
