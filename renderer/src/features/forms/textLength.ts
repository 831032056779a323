/**
 * Text limits counted as the answer check counts them: in characters (code points: an emoji is
 * one; a line break one, CRLF or LF), where the browser's maxLength counts UTF-16 units (an
 * emoji is two) and would stop at half the limit.
 */
import { answerLength } from '../../../../shared/questions/index.js';

export function characters(text: string): number {
  return answerLength(text);
}

/**
 * An edit of `previous` into `next` kept within `max` characters, as maxLength keeps it: the
 * text typed or pasted (what lies between the part before it and the part after it, both
 * unchanged) is cut to the room left, and nothing else is touched. `caret` is where the caret
 * goes after a cut (in UTF-16 units, for setSelectionRange): just after what was kept of the
 * insertion; null when nothing was cut.
 */
export function fitEdit(
  previous: string,
  next: string,
  max: number | undefined,
): { text: string; caret: number | null } {
  if (max === undefined || next.length <= max) return { text: next, caret: null };
  const after = [...next];
  if (after.length <= max) return { text: next, caret: null };
  const before = [...previous];
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) {
    start += 1;
  }
  let end = 0;
  while (
    end < before.length - start &&
    end < after.length - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]
  ) {
    end += 1;
  }
  const head = after.slice(0, start);
  const tail = after.slice(after.length - end);
  const inserted = after.slice(start, after.length - end);
  const room = Math.max(0, max - head.length - tail.length);
  const kept = inserted.slice(0, room);
  const text = [...head, ...kept, ...tail].join('');
  return { text, caret: [...head, ...kept].join('').length };
}
