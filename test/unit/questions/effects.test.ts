import { describe, expect, it } from 'vitest';
import {
  consumablesFrom,
  normalizeAnswers,
  parseQuestions,
  problemReportsFrom,
} from '../../../shared/questions/index.js';
import type { Answers, Question } from '../../../shared/questions/index.js';

function defs(input: unknown[]): Question[] {
  const result = parseQuestions(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.questions;
}

describe('problemReportsFrom', () => {
  const qs = defs([
    {
      type: 'radio_report_problem',
      name: 'vacuum',
      title: 'Was the vacuum bad?',
      options: { problem_description: 'Vacuum problem reported at logout', force_shutdown: true },
    },
    {
      type: 'radio_report_problem',
      name: 'leak',
      title: 'Did you see a leak?',
      options: { safety_hazard: true },
    },
    { type: 'radio_report_problem', name: 'other' },
    { type: 'radio', name: 'plain', choices: ['Yes', 'No'] },
  ]);

  it('makes one draft per report question answered Yes', () => {
    const drafts = problemReportsFrom(qs, {
      vacuum: 'Yes',
      leak: 'Yes',
      other: 'No',
      plain: 'Yes',
    });
    expect(drafts).toEqual([
      {
        question: 'vacuum',
        description: 'Vacuum problem reported at logout',
        force_shutdown: true,
        safety_hazard: false,
      },
      {
        question: 'leak',
        description: 'Did you see a leak?',
        force_shutdown: false,
        safety_hazard: true,
      },
    ]);
  });

  it('falls back to the name when there is no title or description', () => {
    expect(problemReportsFrom(qs, { other: 'Yes' })).toEqual([
      { question: 'other', description: 'other', force_shutdown: false, safety_hazard: false },
    ]);
  });

  it("works on NEMO's stored answers once normalized", () => {
    const answers = normalizeAnswers(qs, {
      vacuum: { type: 'radio_report_problem', name: 'vacuum', user_input: 'true' },
    });
    expect(problemReportsFrom(qs, answers).map((d) => d.question)).toEqual(['vacuum']);
  });

  it('never throws', () => {
    expect(problemReportsFrom(qs, null as unknown as Answers)).toEqual([]);
    expect(problemReportsFrom(null as unknown as Question[], {})).toEqual([]);
  });
});

describe('consumablesFrom', () => {
  const qs = defs([
    { type: 'number', name: 'wafers', consumable: 'Wafer 100 mm' },
    { type: 'number_float', name: 'gas', consumable: 'Nitrogen (l)' },
    { type: 'number', name: 'uncharged' },
    {
      type: 'group',
      name: 'g',
      max_number: 4,
      questions: [
        { type: 'number', name: 'tips', consumable: 'AFM tip' },
        { type: 'textbox', name: 'label' },
      ],
    },
  ]);

  it('makes one draft per answered consumable question with a quantity above zero', () => {
    const answers = normalizeAnswers(qs, {
      wafers: '3',
      gas: 0,
      uncharged: 5,
      g: [{ tips: 2 }, { tips: 0 }, {}, { tips: 1 }],
    });
    expect(consumablesFrom(qs, answers)).toEqual([
      { question: 'wafers', consumable: 'Wafer 100 mm', quantity: 3 },
      { question: 'tips', consumable: 'AFM tip', quantity: 2 },
      { question: 'tips', consumable: 'AFM tip', quantity: 1 },
    ]);
  });

  it('keeps fractional quantities of number_float', () => {
    expect(consumablesFrom(qs, { gas: 1.5 })).toEqual([
      { question: 'gas', consumable: 'Nitrogen (l)', quantity: 1.5 },
    ]);
  });

  it('ignores negative and non-numeric values and never throws', () => {
    expect(consumablesFrom(qs, { wafers: -1, gas: '2' })).toEqual([]);
    expect(consumablesFrom(qs, { g: 'x' })).toEqual([]);
    expect(consumablesFrom(undefined as unknown as Question[], {})).toEqual([]);
  });
});
