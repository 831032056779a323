import type { ReactElement } from 'react';
import type { LocatedProblem } from '../../../../shared/metadata/index.js';

/** Code mode: every problem of the JSON with its line and column. */
export function ProblemList({
  problems,
  label,
}: {
  problems: LocatedProblem[];
  label: string;
}): ReactElement | null {
  if (problems.length === 0) return null;
  return (
    <section className="code-problems" aria-label={label}>
      <h3>{label}</h3>
      <ul>
        {problems.map((p, i) => (
          <li key={`${p.line}:${p.column}:${p.code}:${i}`} className={`problem-${p.severity}`}>
            <span className="problem-place">
              Line {p.line}, column {p.column}
            </span>{' '}
            <span className="problem-severity">{p.severity === 'error' ? 'Error' : 'Note'}:</span>{' '}
            {p.message}
          </li>
        ))}
      </ul>
    </section>
  );
}
