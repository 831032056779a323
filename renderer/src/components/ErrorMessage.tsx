import type { ReactElement } from 'react';

/**
 * An error in words, announced when it appears. With an `id`, the field it is about names it
 * in its aria-describedby.
 */
export function ErrorMessage({
  message,
  id,
}: {
  message: string | null;
  id?: string;
}): ReactElement | null {
  if (!message) return null;
  return (
    <p id={id} className="error" role="alert">
      {message}
    </p>
  );
}
