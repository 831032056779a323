import { useId } from 'react';
import type { ReactElement } from 'react';
import { isEmptyValue, isValidEmail, urlProblem } from '../../../../shared/metadata/index.js';
import type { MetadataField } from '../../../../shared/metadata/index.js';
import { formatWallTime } from '../../format.js';

/**
 * A value that breaks its type's rule (a stored entry may hold one: value problems do not
 * block a save): marked by its look and, for a screen reader as for the eye, by the rule's name.
 */
function InvalidValue({ text, rule }: { text: string; rule: string }): ReactElement {
  const id = useId();
  return (
    <>
      <span className="invalid-value" aria-invalid="true" aria-describedby={id}>
        {text}
      </span>{' '}
      <span id={id} className="value-rule">
        ({rule})
      </span>
    </>
  );
}

/** A url value as a link, or as plain text when it is not a safe, valid URL. */
function UrlValue({ field, url }: { field: MetadataField; url: string }): ReactElement {
  const text = url.trim();
  if (urlProblem(text) !== null) return <InvalidValue text={text} rule="not a valid link" />;
  // Only web links can be followed from here (the app opens them in the browser); a share or
  // ftp address is shown to be copied.
  if (!/^https?:\/\//i.test(text)) return <span className="plain-url">{text}</span>;
  if (field.open_in_current_tab === true) return <a href={text}>{text}</a>;
  return (
    <a href={text} target="_blank" rel="noopener noreferrer">
      {text}
    </a>
  );
}

/** One field's value as read in view mode: ticks, units, links. */
export function FieldValueView({ field }: { field: MetadataField }): ReactElement {
  const value = field.value;
  if (field.type === 'checkbox') {
    const checked = value === true;
    return (
      <span
        className={checked ? 'tick yes' : 'tick no'}
        role="img"
        aria-label={checked ? 'Checked' : 'Not checked'}
      >
        {checked ? '✓' : '✗'}
      </span>
    );
  }
  if (isEmptyValue(value)) return <span className="empty-value">—</span>;
  if (field.type === 'url' && typeof value === 'string')
    return <UrlValue field={field} url={value} />;
  if (field.type === 'email' && typeof value === 'string' && !isValidEmail(value)) {
    return <InvalidValue text={value.trim()} rule="not a valid e-mail address" />;
  }
  if (Array.isArray(value)) return <span>{value.join(', ')}</span>;
  const text = String(value);
  if ((field.type === 'date' || field.type === 'datetime-local') && typeof value === 'string') {
    // As the station shows its other times; the value as stored is the element's own.
    const shown = formatWallTime(value.trim(), field.type);
    if (shown !== null) return <time dateTime={value.trim()}>{shown}</time>;
  }
  if (field.type === 'number' && field.unit) {
    return (
      <span>
        {text} <span className="unit">{field.unit}</span>
      </span>
    );
  }
  return <span>{text}</span>;
}
