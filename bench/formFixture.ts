/**
 * The benchmark form of issue 2: 200 questions, of which 20 groups (6 fields each, answered
 * with 10 repetitions), 50 formulas and 10 plain top-level questions. Pure, so the same form
 * is validated in Node and rendered in Chromium.
 */
import type { Answers, AnswerGroup } from '../shared/questions/index.js';

export const GROUPS = 20;
export const FIELDS_PER_GROUP = 6;
export const REPETITIONS = 10;
export const FORMULAS = 50;
export const PLAIN = 10;

export function benchQuestions(): unknown[] {
  const questions: unknown[] = [];
  for (let i = 0; i < PLAIN; i++) {
    questions.push(
      i % 2 === 0
        ? {
            type: 'textbox',
            name: `top_text_${i}`,
            required: true,
            maxlength: 80,
            pattern: '[A-Z]{2}-\\d{3}',
          }
        : {
            type: 'number_float',
            name: `top_num_${i}`,
            required: true,
            min: 0,
            max: 1000,
            precision: 2,
          },
    );
  }
  for (let g = 0; g < GROUPS; g++) {
    questions.push({
      type: 'group',
      name: `group_${g}`,
      title: `Sample set ${g + 1}`,
      max_number: REPETITIONS,
      questions: [
        {
          type: 'textbox',
          name: `g${g}_name`,
          required: true,
          maxlength: 60,
          pattern: '[A-Za-z0-9 _\\-]+',
        },
        { type: 'number', name: `g${g}_count`, required: true, min: 1, max: 100 },
        { type: 'number_float', name: `g${g}_mass`, min: 0, max: 500, precision: 3, suffix: 'mg' },
        {
          type: 'radio',
          name: `g${g}_kind`,
          choices: ['Sample Name', 'PID'],
          required: true,
          inline: true,
        },
        { type: 'checkbox', name: `g${g}_elements`, choices: ['C', 'O', 'Li', 'Ni', 'Mn', 'Co'] },
        { type: 'dropdown', name: `g${g}_state`, choices: ['solid', 'powder', 'liquid'] },
      ],
    });
  }
  for (let f = 0; f < FORMULAS; f++) {
    const g = f % GROUPS;
    const top = 1 + 2 * (f % (PLAIN / 2));
    questions.push({
      type: 'formula',
      name: `formula_${f}`,
      formula: `round(sum(g${g}_mass) / max(sum(g${g}_count), 1) + top_num_${top} * ${f + 1}, 3)`,
      precision: 3,
    });
  }
  return questions;
}

export function benchAnswers(): Answers {
  const answers: Answers = {};
  for (let i = 0; i < PLAIN; i++) {
    answers[i % 2 === 0 ? `top_text_${i}` : `top_num_${i}`] = i % 2 === 0 ? 'AB-123' : 12.5 + i;
  }
  for (let g = 0; g < GROUPS; g++) {
    const items: AnswerGroup[] = [];
    for (let r = 0; r < REPETITIONS; r++) {
      items.push({
        [`g${g}_name`]: `sample ${g}-${r}`,
        [`g${g}_count`]: r + 1,
        [`g${g}_mass`]: 1.25 * (r + 1),
        [`g${g}_kind`]: r % 2 ? 'PID' : 'Sample Name',
        [`g${g}_elements`]: ['C', 'O'],
        [`g${g}_state`]: 'powder',
      });
    }
    answers[`group_${g}`] = items;
  }
  return answers;
}
