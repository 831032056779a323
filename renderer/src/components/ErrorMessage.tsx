import type { ReactElement } from 'react';

/** An error in words, announced when it appears. */
export function ErrorMessage({ message }: { message: string | null }): ReactElement | null {
  if (!message) return null;
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}
