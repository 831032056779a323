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
  const [copied, setCopied] = useState(false);
  // Shown once: it takes the focus, its text selected, ready to copy (the button that made
  // it keeps nothing to do).
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const copy = (): void => {
    navigator.clipboard
      ?.writeText(secret)
      .then(() => setCopied(true))
      .catch(() => setCopied(false));
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
      <div className="actions">
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
