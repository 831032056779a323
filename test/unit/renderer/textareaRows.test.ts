/** How many lines a textarea of a question form shows: NEMO's auto_resize grows it with its text. */
import { describe, expect, it } from 'vitest';
import { shownRows } from '../../../renderer/src/features/forms/TextFields.js';

describe('a textarea of a question form', () => {
  const text = 'one\ntwo\nthree\nfour';

  // Mutation: auto_resize ignored (the box stayed at its rows, the text scrolled out of sight).
  it('grows with its text from its rows where auto_resize is set, and keeps its rows otherwise', () => {
    const notes = { type: 'textarea', name: 'notes', rows: 3 } as const;
    expect(shownRows({ ...notes, auto_resize: true }, text)).toBe(4);
    expect(shownRows({ ...notes, auto_resize: true }, 'short')).toBe(3);
    expect(shownRows(notes, text)).toBe(3);
    expect(shownRows({ type: 'textarea', name: 'n', auto_resize: true }, '')).toBe(2);
  });
});
