import { useEffect, useId, useRef, useState } from 'react';
import type { ReactElement } from 'react';

/** A new token or key, shown this once: the server keeps only its hash. */
export function SecretOnce({
  title,
  secret,
  usage,
  onDone,
}: {
  title: string;
  secret: string;
  usage: string;
  onDone: () => void;
}): ReactElement {
  const id = useId();
  const [copied, setCopied] = useState<'copied' | 'by-hand' | null>(null);
  // Shown once: it takes the focus, its text selected, ready to copy (the button that made
  // it keeps nothing to do).
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  // The clipboard API is there on https and loopback only: a server reached at its LAN address
  // over plain http has none. Then the field's text is selected and copied as the browser's
  // Copy command does, and failing that the person is told to copy it.
  const byHand = (): void => {
    field.current?.focus();
    field.current?.select();
    setCopied(document.execCommand('copy') ? 'copied' : 'by-hand');
  };
  const copy = (): void => {
    if (!navigator.clipboard) {
      byHand();
      return;
    }
    navigator.clipboard.writeText(secret).then(() => setCopied('copied'), byHand);
  };
  return (
    <section className="panel secret" aria-labelledby={`${id}-title`} role="alert">
      <h2 id={`${id}-title`}>{title}</h2>
      <p>
        Copy it now: it is shown this once and only its hash is kept. A lost one cannot be shown
        again; make a new one.
      </p>
      <div className="field">
        <label htmlFor={`${id}-value`}>Secret</label>
        <input
          id={`${id}-value`}
          ref={field}
          className="code"
          readOnly
          value={secret}
          onFocus={(e) => e.target.select()}
        />
      </div>
      <p className="help">{usage}</p>
      {copied === 'by-hand' && (
        <p className="notice" role="status">
          This page cannot copy by itself here: the secret is selected, press Ctrl+C (⌘C on a Mac)
          to copy it.
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={copy}>
          {copied === 'copied' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
