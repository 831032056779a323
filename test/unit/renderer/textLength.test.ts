import { describe, expect, it } from 'vitest';
import { characters, fitEdit } from '../../../renderer/src/features/forms/textLength.js';

describe('fitEdit', () => {
  it('leaves an edit within the limit as it is', () => {
    expect(fitEdit('abc', 'abcd', 5)).toEqual({ text: 'abcd', caret: null });
    expect(fitEdit('abc', 'abcd', undefined)).toEqual({ text: 'abcd', caret: null });
    // Five emoji are ten UTF-16 units, five characters.
    expect(fitEdit('😀'.repeat(4), '😀'.repeat(5), 5)).toEqual({
      text: '😀'.repeat(5),
      caret: null,
    });
  });

  it('cuts what was typed or pasted, never the text around it', () => {
    // Typing at the start of a full field changes nothing, and the caret stays where it was.
    expect(fitEdit('abcdefghij', 'Xabcdefghij', 10)).toEqual({ text: 'abcdefghij', caret: 0 });
    // A paste in the middle is cut to the room left.
    expect(fitEdit('abcdef', 'abc12345def', 8)).toEqual({ text: 'abc12def', caret: 5 });
    // Replacing a selection: the selection's room counts.
    expect(fitEdit('abcdef', 'aXYZWf', 5)).toEqual({ text: 'aXYZf', caret: 4 });
    // Emoji count one each, and the caret is in UTF-16 units.
    expect(fitEdit('😀😀', '😀😀😀😀', 3)).toEqual({ text: '😀😀😀', caret: 6 });
    expect(characters(fitEdit('', '😀'.repeat(90), 80).text)).toBe(80);
  });
});

describe('characters', () => {
  it('counts as the answer check does: an emoji once, a line break once, CRLF or LF', () => {
    expect(characters('😀😀')).toBe(2);
    expect(characters('ab\ncd')).toBe(5);
    // A stored answer (NEMO's, a reservation's) holds CRLF; the check takes it at 5.
    expect(characters('ab\r\ncd')).toBe(5);
  });
});
