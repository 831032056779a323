/**
 * Where a question form starts (defaults, one repetition of each group, a reservation's
 * answers over them) and which problems the core named an edit clears.
 */
import { describe, expect, it } from 'vitest';
import { parseQuestions } from '../../../shared/questions/index.js';
import type { AnswerProblem, Question } from '../../../shared/questions/index.js';
import {
  withMinimumRepetitions,
  withoutProblemsAt,
} from '../../../renderer/src/features/forms/useQuestionForm.js';

function questions(list: unknown[]): Question[] {
  const parsed = parseQuestions(list);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.questions;
}

describe('withMinimumRepetitions', () => {
  const form = questions([
    { type: 'textbox', name: 'experiment_title' },
    { type: 'checkbox', name: 'ppe', choices: ['glasses', 'gloves'], default_value: ['glasses'] },
    { type: 'radio', name: 'mode', choices: ['a', 'b'], default_value: 'b' },
  ]);

  it('fills in what a reservation gives and keeps the defaults of the rest', () => {
    // A reservation matched experiment_title only: ppe kept its pre-selected choice (it was
    // cleared to [], as an unanswered checkbox reads).
    expect(withMinimumRepetitions(form, { experiment_title: 'Grains' })).toEqual({
      ...withMinimumRepetitions(form),
      experiment_title: 'Grains',
    });
    expect(withMinimumRepetitions(form)).toMatchObject({ ppe: ['glasses'], mode: 'b' });
    expect(withMinimumRepetitions(form, { ppe: ['gloves'] })).toMatchObject({
      ppe: ['gloves'],
      mode: 'b',
    });
  });
});

describe('withoutProblemsAt', () => {
  const problem = (path: (string | number)[]): AnswerProblem => ({
    path,
    question: String(path[0]),
    rule: 'required',
    message: 'x',
  });

  it("clears a field's problems and those within it, not a namesake's that starts the same", () => {
    const list = [
      problem(['g', 1, 'n']),
      problem(['g', 1, 'name']),
      problem(['sample']),
      problem(['sample_group', 0, 'x']),
      problem(['g', 1]),
    ];
    expect(withoutProblemsAt(list, 'g.1.n').map((p) => p.path)).toEqual([
      ['g', 1, 'name'],
      ['sample'],
      ['sample_group', 0, 'x'],
      ['g', 1],
    ]);
    expect(withoutProblemsAt(list, 'sample').map((p) => p.path)).toEqual([
      ['g', 1, 'n'],
      ['g', 1, 'name'],
      ['sample_group', 0, 'x'],
      ['g', 1],
    ]);
    expect(withoutProblemsAt(list, 'g.1').map((p) => p.path)).toEqual([
      ['sample'],
      ['sample_group', 0, 'x'],
    ]);
  });
});
