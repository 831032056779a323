import { describe, expect, it } from 'vitest';
import { parseQuestions, serializeQuestions } from '../../../shared/questions/index.js';
import type { DefinitionProblem, Question } from '../../../shared/questions/index.js';

function ok(input: unknown): Question[] {
  const result = parseQuestions(input);
  if (!result.ok) throw new Error(`expected valid definitions: ${JSON.stringify(result.problems)}`);
  return result.questions;
}

function problems(input: unknown): DefinitionProblem[] {
  const result = parseQuestions(input);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
}

/** The single problem for a one-question list, checked to name the question and the property. */
function problemAt(question: Record<string, unknown>, path: string): DefinitionProblem {
  const found = problems([question]);
  const match = found.find((p) => p.path === path);
  if (!match) throw new Error(`no problem at ${path}: ${JSON.stringify(found)}`);
  return match;
}

const q = (extra: Record<string, unknown>): Record<string, unknown> => ({
  name: 'q1',
  title: 'Q',
  ...extra,
});

describe('parseQuestions: every type is accepted with its own properties', () => {
  it('accepts the full property set of each type', () => {
    const questions = ok([
      {
        type: 'radio',
        name: 'r',
        title: 'R',
        title_html: '<b>R</b>',
        required: true,
        help: 'help',
        'max-width': 300,
        choices: ['a', 'b'],
        labels: ['A', 'B'],
        default_value: 'a',
        inline: true,
      },
      {
        type: 'radio_report_problem',
        name: 'rp',
        title: 'Problem?',
        labels: ['Yes, a problem', 'No'],
        options: { problem_description: 'Broken', force_shutdown: true, safety_hazard: false },
      },
      {
        type: 'checkbox',
        name: 'c',
        choices: ['x', 'y'],
        labels: ['X', 'Y'],
        default_value: ['y'],
        inline: false,
      },
      {
        type: 'textbox',
        name: 't',
        maxlength: 10,
        pattern: '[a-z]+',
        placeholder: 'abc',
        prefix: '#',
        suffix: '!',
      },
      { type: 'textarea', name: 'ta', rows: 5, maxlength: 100, pattern: '.*', placeholder: 'p' },
      {
        type: 'number',
        name: 'n',
        min: 0,
        max: 10,
        consumable: 'Gloves',
        prefix: '$',
        suffix: 'pcs',
        placeholder: '1',
      },
      {
        type: 'number_float',
        name: 'f',
        min: -1.5,
        max: 1.5,
        precision: 2,
        consumable: 'Gas',
        prefix: '',
        suffix: 'l',
        placeholder: '0.5',
      },
      {
        type: 'dropdown',
        name: 'd',
        choices: ['one', 'two'],
        labels: ['One', 'Two'],
        default_value: 'two',
      },
      {
        type: 'group',
        name: 'g',
        title: 'G',
        max_number: 3,
        questions: [{ type: 'textbox', name: 'gt' }],
      },
      { type: 'formula', name: 'fo', formula: 'n * f', precision: 1, suffix: 'kg' },
    ]);
    expect(questions.map((x) => x.type)).toEqual([
      'radio',
      'radio_report_problem',
      'checkbox',
      'textbox',
      'textarea',
      'number',
      'number_float',
      'dropdown',
      'group',
      'formula',
    ]);
  });

  it('fills the defaults the spec states', () => {
    const [radio, report, textarea, checkbox] = ok([
      { type: 'radio', name: 'r', choices: ['a', 'b'] },
      { type: 'radio_report_problem', name: 'p' },
      { type: 'textarea', name: 't' },
      { type: 'checkbox', name: 'c', choices: ['a', 'b'], default_value: 'b' },
    ]);
    expect(radio).toMatchObject({ labels: ['a', 'b'] });
    expect(report).toMatchObject({ choices: ['Yes', 'No'], labels: ['Yes', 'No'] });
    expect(textarea).toMatchObject({ rows: 2 });
    expect(checkbox).toMatchObject({ default_value: ['b'] });
  });

  it("reads NEMO's float as number_float", () => {
    const [f] = ok([{ type: 'float', name: 'f', precision: 1 }]);
    expect(f?.type).toBe('number_float');
    expect(serializeQuestions(ok([{ type: 'float', name: 'f' }]))).toEqual([
      { type: 'number_float', name: 'f' },
    ]);
  });

  it('accepts JSON text of a list', () => {
    expect(ok('[{"type":"textbox","name":"a"}]')).toEqual([{ type: 'textbox', name: 'a' }]);
    expect(ok('[]')).toEqual([]);
  });

  it('drops nothing it was given and adds no unknown property', () => {
    const [t] = ok([{ type: 'textbox', name: 'a', title: '', required: false }]);
    expect(t).toEqual({ type: 'textbox', name: 'a', title: '', required: false });
  });
});

describe("parseQuestions: NEMO's own properties", () => {
  // Mutation: any of these refused as unknown (a list written for NEMO did not load), or
  // dropped from the canonical copy (it would not go back to NEMO as it came).
  it('keeps the properties NEMO forms read beyond the spec, in their place', () => {
    const nemo = [
      { type: 'textarea', name: 'notes', rows: 3, auto_resize: true, form_row: 1, row_cell: 0 },
      { type: 'number', name: 'n', min: 1, max: 9, step: 2 },
      { type: 'float', name: 'f', step: 0.25, precision: 2 },
      {
        type: 'group',
        name: 'gases',
        title: 'Gases',
        max_number: 3,
        group_add_button_name: 'Add gas',
        questions: [{ type: 'textbox', name: 'gas', form_row: 0, row_cell: 1 }],
      },
    ];
    expect(serializeQuestions(ok(nemo))).toEqual([
      { type: 'textarea', name: 'notes', form_row: 1, row_cell: 0, rows: 3, auto_resize: true },
      { type: 'number', name: 'n', min: 1, max: 9, step: 2 },
      { type: 'number_float', name: 'f', step: 0.25, precision: 2 },
      {
        type: 'group',
        name: 'gases',
        title: 'Gases',
        max_number: 3,
        group_add_button_name: 'Add gas',
        questions: [{ type: 'textbox', name: 'gas', form_row: 0, row_cell: 1 }],
      },
    ]);
  });

  // Mutation: default_choice refused, or taken over a default_value given beside it.
  it("reads default_choice, NEMO's older name, as default_value where that is absent", () => {
    const choices = ['a', 'b'];
    expect(
      serializeQuestions(
        ok([
          { type: 'radio', name: 'r', choices, default_choice: 'b' },
          { type: 'dropdown', name: 'd', choices, default_choice: 'a', default_value: 'b' },
          { type: 'checkbox', name: 'c', choices, default_choice: 'a' },
        ]),
      ),
    ).toEqual([
      { type: 'radio', name: 'r', choices, labels: choices, default_value: 'b' },
      { type: 'dropdown', name: 'd', choices, labels: choices, default_value: 'b' },
      { type: 'checkbox', name: 'c', choices, labels: choices, default_value: ['a'] },
    ]);
    expect(
      problemAt({ type: 'radio', name: 'r', choices, default_choice: 'z' }, 'r.default_choice')
        .message,
    ).toContain('property "default_choice" is "z", which is not one of the choices');
  });

  it('names what is wrong with them, and what is not supported', () => {
    expect(problemAt({ type: 'number', name: 'n', step: 0 }, 'n.step').message).toContain(
      'must be greater than 0',
    );
    // Mutation: a step the answers cannot keep to (whole numbers; the precision's places).
    expect(problemAt({ type: 'number', name: 'n', step: 0.5 }, 'n.step').message).toContain(
      'must be a whole number, not 0.5',
    );
    expect(
      problemAt({ type: 'number_float', name: 'n', step: 0.25, precision: 1 }, 'n.step').message,
    ).toContain(
      'property "step" (0.25) has more decimal places than property "precision" (1) allows',
    );
    expect(problemAt({ type: 'textbox', name: 't', form_row: -1 }, 't.form_row').message).toContain(
      'must be at least 0',
    );
    expect(
      problemAt({ type: 'textarea', name: 't', auto_resize: 'yes' }, 't.auto_resize').message,
    ).toContain('must be true or false');
    expect(
      problemAt(
        {
          type: 'group',
          name: 'g',
          group_add_button_name: ' ',
          questions: [{ type: 'textbox', name: 'x' }],
        },
        'g.group_add_button_name',
      ).message,
    ).toContain('is empty');
    expect(
      problemAt({ type: 'number', name: 'n', consumable_id: 4 }, 'n.consumable_id').message,
    ).toContain(`name the consumable with "consumable" (NEMO's ids are not this facility's)`);
    expect(
      problemAt(
        { type: 'dropdown', name: 'd', choices: ['a', 'b'], labels: { Group: ['A', 'B'] } },
        'd.labels',
      ).message,
    ).toContain("is an object (NEMO's option groups), which is not supported here");
  });
});

describe('parseQuestions: list-level problems', () => {
  it('rejects a non-list', () => {
    expect(problems({ type: 'textbox' })[0]?.message).toContain('list');
    expect(problems('{"a":1}')[0]?.message).toContain('list');
    expect(problems(null)[0]?.path).toBe('');
  });

  it('rejects text that is not JSON', () => {
    expect(problems('[{')[0]?.message).toContain('not valid JSON');
  });

  it('rejects a question that is not an object, by position', () => {
    const found = problems([{ type: 'textbox', name: 'a' }, 'oops', 3]);
    expect(found.map((p) => p.path)).toEqual(['[1]', '[2]']);
    expect(found[0]?.message).toContain('Question 2');
    expect(found[0]?.message).toContain('object');
  });

  it('collects all problems instead of stopping at the first', () => {
    const found = problems([
      { type: 'textbox', name: 'a', maxlength: -1 },
      { type: 'radio', name: 'b', choices: [] },
      { type: 'nope', name: 'c' },
    ]);
    expect(found.map((p) => p.path)).toEqual(['a.maxlength', 'b.choices', 'c.type']);
  });
});

describe('parseQuestions: names', () => {
  it('requires a name', () => {
    const p = problemAt({ type: 'textbox' }, '[0].name');
    expect(p.message).toContain('Question 1');
    expect(p.message).toContain('"name"');
    expect(p.message).toContain('missing');
  });

  it('rejects an empty or non-text name', () => {
    expect(problemAt({ type: 'textbox', name: '' }, '[0].name').message).toContain('empty');
    expect(problemAt({ type: 'textbox', name: 5 }, '[0].name').message).toContain('must be text');
  });

  it('rejects names that formulas could not use', () => {
    for (const name of ['my name', '1abc', 'a-b', 'é']) {
      const p = problemAt({ type: 'textbox', name }, '[0].name');
      expect(p.message).toContain(JSON.stringify(name));
      // "é" is a letter too: the rule says which ones.
      expect(p.message).toContain('a letter A to Z (either case) or _');
    }
    expect(ok([{ type: 'textbox', name: '_a1' }])).toHaveLength(1);
  });

  it('rejects duplicate names at top level, inside a group, and across a group', () => {
    const top = problems([
      { type: 'textbox', name: 'a' },
      { type: 'number', name: 'a' },
    ]);
    expect(top).toHaveLength(1);
    expect(top[0]?.path).toBe('[1].name');
    expect(top[0]?.message).toContain('already used by question "a"');

    const inside = problems([
      {
        type: 'group',
        name: 'g',
        questions: [
          { type: 'textbox', name: 'x' },
          { type: 'textbox', name: 'x' },
        ],
      },
    ]);
    expect(inside.map((p) => p.path)).toEqual(['g.questions[1].name']);
    expect(inside[0]?.message).toContain('group "g"');

    const across = problems([
      { type: 'textbox', name: 'x' },
      { type: 'group', name: 'g', questions: [{ type: 'textbox', name: 'x' }] },
    ]);
    expect(across.map((p) => p.path)).toEqual(['g.questions[0].name']);
    expect(across[0]?.message).toContain('already used by question "x"');
  });
});

describe('parseQuestions: types and properties', () => {
  it('rejects an unknown or missing type, listing the valid ones', () => {
    const p = problemAt({ name: 'a', type: 'slider' }, 'a.type');
    expect(p.message).toContain('"slider"');
    expect(p.message).toContain(
      'radio, radio_report_problem, checkbox, textbox, textarea, number, number_float, dropdown, group, formula',
    );
    expect(problemAt({ name: 'a' }, 'a.type').message).toContain('missing');
    expect(problemAt({ name: 'a', type: 3 }, 'a.type').message).toContain('must be text');
  });

  it('rejects an unknown property, naming it and the question', () => {
    const p = problemAt(q({ type: 'textbox', colour: 'red' }), 'q1.colour');
    expect(p.message).toContain('Question "q1"');
    expect(p.message).toContain('"colour"');
    expect(p.message).toContain('allowed');
  });

  it('treats a property of another type as unknown (e.g. rows on textbox, choices on number)', () => {
    expect(problemAt(q({ type: 'textbox', rows: 3 }), 'q1.rows').message).toContain(
      'unknown property "rows"',
    );
    expect(problemAt(q({ type: 'number', choices: ['a'] }), 'q1.choices').message).toContain(
      'unknown property',
    );
    expect(problemAt(q({ type: 'number', precision: 2 }), 'q1.precision').message).toContain(
      'unknown property',
    );
    expect(
      problemAt(q({ type: 'textbox', default_value: 'x' }), 'q1.default_value').message,
    ).toContain('unknown');
  });

  it('allows consumable only on number and number_float', () => {
    const p = problemAt(q({ type: 'textbox', consumable: 'Gloves' }), 'q1.consumable');
    expect(p.message).toContain('unknown property "consumable"');
    expect(p.message).toContain('number and number_float');
    expect(
      problemAt(q({ type: 'formula', formula: '1', consumable: 'x' }), 'q1.consumable').message,
    ).toContain('unknown');
    expect(problemAt(q({ type: 'number', consumable: ' ' }), 'q1.consumable').message).toContain(
      'empty',
    );
  });

  it('checks the JSON type of each property', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ type: 'textbox', required: 'yes' }, 'q1.required', 'true or false'],
      [{ type: 'textbox', title: 3 }, 'q1.title', 'text'],
      [{ type: 'textbox', title_html: [] }, 'q1.title_html', 'text'],
      [{ type: 'textbox', help: {} }, 'q1.help', 'text'],
      [{ type: 'textbox', 'max-width': '300' }, 'q1.max-width', 'number'],
      [{ type: 'number', min: '1' }, 'q1.min', 'number'],
      [{ type: 'number', max: null }, 'q1.max', 'number'],
      [{ type: 'radio', choices: 'a,b' }, 'q1.choices', 'list of texts'],
      [{ type: 'radio', choices: ['a', 1] }, 'q1.choices', 'list of texts'],
      [{ type: 'radio', choices: ['a'], labels: 'A' }, 'q1.labels', 'list of texts'],
      [{ type: 'radio', choices: ['a'], inline: 1 }, 'q1.inline', 'true or false'],
      [{ type: 'textbox', maxlength: 1.5 }, 'q1.maxlength', 'whole number'],
      [{ type: 'textbox', pattern: 5 }, 'q1.pattern', 'text'],
      [{ type: 'group', questions: {} }, 'q1.questions', 'list of questions'],
      [{ type: 'formula', formula: 5 }, 'q1.formula', 'text'],
      [{ type: 'radio_report_problem', options: [] }, 'q1.options', 'object'],
    ];
    for (const [extra, path, expected] of cases) {
      const p = problemAt(q(extra), path);
      expect(p.message, path).toContain(expected);
      const property = path.split('.').pop() ?? '';
      expect(p.message, path).toContain(`"${property}"`);
      expect(p.message, path).toContain('"q1"');
    }
  });

  it('checks numeric ranges of properties', () => {
    expect(problemAt(q({ type: 'textbox', maxlength: -1 }), 'q1.maxlength').message).toContain(
      'at least 0',
    );
    expect(problemAt(q({ type: 'textarea', rows: -2 }), 'q1.rows').message).toContain('at least 1');
    expect(problemAt(q({ type: 'number_float', precision: -1 }), 'q1.precision').message).toContain(
      'at least 0',
    );
    expect(
      problemAt(q({ type: 'formula', formula: '1', precision: 1.5 }), 'q1.precision').message,
    ).toContain('whole');
    expect(problemAt(q({ type: 'textbox', 'max-width': 0 }), 'q1.max-width').message).toContain(
      'greater than 0',
    );
    expect(ok([q({ type: 'textbox', maxlength: 0 })])).toHaveLength(1);
  });

  it('rejects min greater than max', () => {
    const p = problemAt(q({ type: 'number', min: 5, max: 1 }), 'q1.min');
    expect(p.message).toContain('"min" (5)');
    expect(p.message).toContain('"max" (1)');
    expect(ok([q({ type: 'number', min: 1, max: 1 })])).toHaveLength(1);
  });
});

describe('parseQuestions: choices', () => {
  it('requires non-empty choices for radio, checkbox and dropdown', () => {
    for (const type of ['radio', 'checkbox', 'dropdown']) {
      expect(problemAt(q({ type }), 'q1.choices').message).toContain('missing');
      expect(problemAt(q({ type, choices: [] }), 'q1.choices').message).toContain('empty');
    }
  });

  it('rejects duplicate and empty choices', () => {
    expect(
      problemAt(q({ type: 'radio', choices: ['a', 'b', 'a'] }), 'q1.choices').message,
    ).toContain('"a" more than once');
    expect(problemAt(q({ type: 'radio', choices: ['a', ''] }), 'q1.choices').message).toContain(
      'choice 2',
    );
  });

  it('requires one label per choice', () => {
    const p = problemAt(q({ type: 'dropdown', choices: ['a', 'b'], labels: ['A'] }), 'q1.labels');
    expect(p.message).toContain('1 label');
    expect(p.message).toContain('2 choices');
  });

  it('requires default_value among the choices', () => {
    expect(
      problemAt(q({ type: 'radio', choices: ['a'], default_value: 'z' }), 'q1.default_value')
        .message,
    ).toContain('"z"');
    expect(
      problemAt(q({ type: 'dropdown', choices: ['a'], default_value: 1 }), 'q1.default_value')
        .message,
    ).toContain('text');
    expect(
      problemAt(
        q({ type: 'checkbox', choices: ['a', 'b'], default_value: ['a', 'z'] }),
        'q1.default_value',
      ).message,
    ).toContain('"z"');
    expect(
      problemAt(
        q({ type: 'checkbox', choices: ['a'], default_value: ['a', 'a'] }),
        'q1.default_value',
      ).message,
    ).toContain('more than once');
    expect(
      ok([q({ type: 'checkbox', choices: ['a', 'b'], default_value: ['b', 'a'] })]),
    ).toHaveLength(1);
  });

  it('keeps radio_report_problem choices fixed to Yes and No', () => {
    expect(ok([q({ type: 'radio_report_problem', choices: ['Yes', 'No'] })])).toHaveLength(1);
    expect(
      problemAt(q({ type: 'radio_report_problem', choices: ['true', 'false'] }), 'q1.choices')
        .message,
    ).toContain('"Yes", "No"');
    expect(
      problemAt(q({ type: 'radio_report_problem', labels: ['Y'] }), 'q1.labels').message,
    ).toContain('2 labels');
  });

  it('checks radio_report_problem options', () => {
    expect(
      problemAt(q({ type: 'radio_report_problem', options: { urgency: 1 } }), 'q1.options.urgency')
        .message,
    ).toContain('"urgency"');
    expect(
      problemAt(
        q({ type: 'radio_report_problem', options: { force_shutdown: 'yes' } }),
        'q1.options.force_shutdown',
      ).message,
    ).toContain('true or false');
    expect(
      problemAt(
        q({ type: 'radio_report_problem', options: { problem_description: 1 } }),
        'q1.options.problem_description',
      ).message,
    ).toContain('text');
  });
});

describe('parseQuestions: text patterns', () => {
  it('rejects a pattern that compiles with neither the v nor the u flag', () => {
    const p = problemAt(q({ type: 'textbox', pattern: '[a-z' }), 'q1.pattern');
    expect(p.message).toContain('"pattern"');
    expect(p.message).toContain('regular expression');
    // Valid without flags, but not with u (a lone brace) and so not with v either.
    expect(problemAt(q({ type: 'textbox', pattern: 'a{' }), 'q1.pattern').message).toContain(
      'regular expression',
    );
    expect(ok([q({ type: 'textbox', pattern: '[A-Z]{2}\\d+' })])).toHaveLength(1);
  });

  it('accepts a pattern that only the older u-flag semantics of browsers compile', () => {
    // An unescaped "-" or "(" in a class: refused by the v flag, common in NEMO forms.
    expect(ok([q({ type: 'textbox', pattern: '[A-Za-z0-9_-]+' })])).toHaveLength(1);
    expect(ok([q({ type: 'textarea', pattern: '[(]' })])).toHaveLength(1);
  });

  it('rejects a pattern that is valid only inside the whole-value wrapper', () => {
    // A browser compiles the pattern alone first; wrapped alone, "a)|(b" would become
    // ^(?:a)|(b)$, which takes every value that starts with "a".
    for (const pattern of ['a)|(b', 'x)(y']) {
      expect(problemAt(q({ type: 'textbox', pattern }), 'q1.pattern').message).toContain(
        'regular expression',
      );
    }
    // A list saved while such a pattern was taken still loads (the pattern checks nothing).
    const saved = [q({ type: 'textbox', pattern: 'a)|(b' })];
    expect(parseQuestions(saved, { stored: true }).ok).toBe(true);
    expect(parseQuestions([q({ type: 'textbox', pattern: '[a-z' })], { stored: true }).ok).toBe(
      false,
    );
  });

  it('names the group in the path and message of a nested problem', () => {
    const found = problems([
      {
        type: 'group',
        name: 'sample_group',
        questions: [{ type: 'textbox', name: 'sample_name', pattern: '(' }],
      },
    ]);
    expect(found).toHaveLength(1);
    expect(found[0]?.path).toBe('sample_group.sample_name.pattern');
    expect(found[0]?.message).toContain('Question "sample_name" in group "sample_group"');
  });
});

describe('parseQuestions: groups', () => {
  it('requires questions', () => {
    expect(problemAt(q({ type: 'group' }), 'q1.questions').message).toContain('missing');
    expect(problemAt(q({ type: 'group', questions: [] }), 'q1.questions').message).toContain(
      'empty',
    );
  });

  it('rejects nested groups and report-problem questions inside a group', () => {
    const nested = problemAt(
      q({
        type: 'group',
        questions: [{ type: 'group', name: 'inner', questions: [{ type: 'textbox', name: 'x' }] }],
      }),
      'q1.inner.type',
    );
    expect(nested.message).toContain('cannot contain another group');
    const report = problemAt(
      q({ type: 'group', questions: [{ type: 'radio_report_problem', name: 'p' }] }),
      'q1.p.type',
    );
    expect(report.message).toContain('cannot be inside a group');
  });

  it('checks max_number', () => {
    expect(
      problemAt(
        q({ type: 'group', max_number: 0, questions: [{ type: 'textbox', name: 'x' }] }),
        'q1.max_number',
      ).message,
    ).toContain('at least 1');
    expect(
      problemAt(
        q({ type: 'group', max_number: 2.5, questions: [{ type: 'textbox', name: 'x' }] }),
        'q1.max_number',
      ).message,
    ).toContain('whole');
  });

  it('reports a nested question without a name by position', () => {
    const p = problemAt(
      q({ type: 'group', questions: [{ type: 'textbox' }] }),
      'q1.questions[0].name',
    );
    expect(p.message).toContain('Question 1 in group "q1"');
  });
});

describe('parseQuestions: formulas', () => {
  const numbers = [
    { type: 'number', name: 'a' },
    { type: 'number_float', name: 'b' },
  ];

  it('requires a formula that parses, giving the parser error and position', () => {
    expect(problemAt(q({ type: 'formula' }), 'q1.formula').message).toContain('missing');
    expect(problemAt(q({ type: 'formula', formula: '  ' }), 'q1.formula').message).toContain(
      'empty',
    );
    const p = problemAt(q({ type: 'formula', formula: '1 +* 2' }), 'q1.formula');
    expect(p.message).toContain('character 4');
    expect(p.message).toContain("'*'");
    expect(problemAt(q({ type: 'formula', formula: '2 ^ 3' }), 'q1.formula').message).toContain(
      '**',
    );
  });

  it('accepts references to number, number_float and formula questions', () => {
    expect(
      ok([
        ...numbers,
        { type: 'formula', name: 'c', formula: 'a + b' },
        { type: 'formula', name: 'd', formula: 'c * 2' },
      ]),
    ).toHaveLength(4);
  });

  it('rejects unknown names and non-numeric questions', () => {
    const unknown = problems([...numbers, { type: 'formula', name: 'c', formula: 'a + zz' }]);
    expect(unknown).toHaveLength(1);
    expect(unknown[0]?.path).toBe('c.formula');
    expect(unknown[0]?.message).toContain('"zz"');
    const text = problems([
      { type: 'textbox', name: 't' },
      { type: 'formula', name: 'c', formula: 't * 2' },
    ]);
    expect(text[0]?.message).toContain('"t", a textbox question');
    const group = problems([
      { type: 'group', name: 'g', questions: [{ type: 'number', name: 'x' }] },
      { type: 'formula', name: 'c', formula: 'sum(g)' },
    ]);
    expect(group[0]?.message).toContain('a group question');
  });

  it('lets a group formula use its own group, top-level questions, and another group as a list', () => {
    expect(
      ok([
        { type: 'number', name: 'rate' },
        {
          type: 'group',
          name: 'g',
          questions: [
            { type: 'number', name: 'x' },
            { type: 'formula', name: 'y', formula: 'x * rate' },
          ],
        },
        { type: 'formula', name: 'total', formula: 'sum(y) + sum(x)' },
      ]),
    ).toHaveLength(3);
    // A field of another group is outside its group: a list there too (DESIGN.md, NEMO).
    const g1 = {
      type: 'group',
      name: 'g1',
      max_number: 2,
      questions: [{ type: 'number', name: 'x' }],
    };
    expect(
      ok([
        g1,
        {
          type: 'group',
          name: 'g2',
          questions: [{ type: 'formula', name: 'y', formula: 'sum(x) + x[0]' }],
        },
      ]),
    ).toHaveLength(2);
    const other = problems([
      g1,
      { type: 'group', name: 'g2', questions: [{ type: 'formula', name: 'y', formula: 'x + 1' }] },
    ]);
    expect(other).toHaveLength(1);
    expect(other[0]?.path).toBe('g2.y.formula');
    expect(other[0]?.message).toContain('use sum(x)');
  });

  it('rejects a group field used outside its group as one number instead of a list', () => {
    const group = {
      type: 'group',
      name: 'g',
      max_number: 3,
      questions: [{ type: 'number', name: 'x' }],
    };
    const found = problems([group, { type: 'formula', name: 'c', formula: 'x * 2 + sum(x)' }]);
    expect(found).toHaveLength(1);
    expect(found[0]?.path).toBe('c.formula');
    expect(found[0]?.message).toContain('use sum(x)');
    expect(problems([group, { type: 'formula', name: 'c', formula: 'round(x)' }])).toHaveLength(1);
    expect(
      ok([group, { type: 'formula', name: 'c', formula: 'max(x, 1) - min(x) + x[0] * x[-1]' }]),
    ).toHaveLength(2);
  });

  it('rejects an index on a value that is not a list, which could never be computed', () => {
    const group = {
      type: 'group',
      name: 'g',
      max_number: 3,
      questions: [
        { type: 'number', name: 'x' },
        { type: 'formula', name: 'own', formula: 'x[0] + 1' },
      ],
    };
    const scalar = problems([
      { type: 'number', name: 'a' },
      { type: 'formula', name: 'c', formula: 'a[0] + 1' },
    ]);
    expect(scalar).toHaveLength(1);
    expect(scalar[0]?.path).toBe('c.formula');
    expect(scalar[0]?.message).toContain('"a" is one number, not a list');
    // Inside its own group a field is that repetition's one number.
    const inGroup = problems([group]);
    expect(inGroup.map((p) => p.path)).toEqual(['g.own.formula']);
    expect(inGroup[0]?.message).toContain('"x" is one number, not a list');
    const twice = problems([
      { ...group, questions: [group.questions[0]] },
      q({ type: 'formula', formula: 'x[0][1]' }),
    ]);
    expect(twice).toHaveLength(1);
    expect(twice[0]?.message).toContain('at character 5');
    expect(problems([q({ type: 'formula', formula: '(1 + 2)[0]' })])).toHaveLength(1);
    // A list saved before this rule is still read back (its formula stays blank, as it did).
    const saved = [{ type: 'number', name: 'a' }, q({ type: 'formula', formula: 'a[0]' })];
    expect(parseQuestions(saved, { stored: true }).ok).toBe(true);
  });

  it('rejects dependency cycles, including a formula using itself', () => {
    const self = problems([{ type: 'formula', name: 'a', formula: 'a + 1' }]);
    expect(self[0]?.message).toContain('its own value');
    const cycle = problems([
      { type: 'formula', name: 'a', formula: 'b + 1' },
      { type: 'formula', name: 'b', formula: 'c + 1' },
      { type: 'formula', name: 'c', formula: 'a * 2' },
    ]);
    expect(cycle).toHaveLength(1);
    expect(cycle[0]?.message).toContain('a -> b -> c -> a');
    const throughGroup = problems([
      { type: 'formula', name: 'top', formula: 'sum(inner) + 1' },
      {
        type: 'group',
        name: 'g',
        questions: [{ type: 'formula', name: 'inner', formula: 'top * 2' }],
      },
    ]);
    expect(throughGroup).toHaveLength(1);
    expect(throughGroup[0]?.message).toContain('top -> inner -> top');
  });

  it('does not pile up follow-up problems on a question that already has one', () => {
    const found = problems([
      { type: 'numbr', name: 'a' },
      { type: 'formula', name: 'c', formula: 'a + 1' },
    ]);
    expect(found.map((p) => p.path)).toEqual(['a.type']);
  });
});

describe('parseQuestions never throws', () => {
  it('on hostile input', () => {
    const hostile = new Proxy([], {
      get() {
        throw new Error('boom');
      },
    });
    for (const input of [
      undefined,
      1,
      true,
      Symbol('x'),
      () => 1,
      hostile,
      [[]],
      [null],
      { length: 1 },
    ]) {
      const result = parseQuestions(input);
      expect(result.ok === true || Array.isArray(result.problems)).toBe(true);
    }
  });
});

describe('serializeQuestions', () => {
  it('writes canonical JSON that parses back to the same questions', () => {
    const parsed = ok([
      { title: 'T', type: 'float', name: 'f', precision: 2 },
      { type: 'radio_report_problem', name: 'p', options: { safety_hazard: true } },
      { type: 'group', name: 'g', questions: [{ type: 'textarea', name: 'notes' }] },
    ]);
    const json = serializeQuestions(parsed);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    expect(Object.keys(json[0] as object)).toEqual(['type', 'name', 'title', 'precision']);
    expect(ok(json)).toEqual(parsed);
    expect(ok(JSON.stringify(json))).toEqual(parsed);
  });

  it('writes -0 as 0 so that the JSON text round-trips', () => {
    const parsed = ok([{ type: 'number', name: 'n', min: -0 }]);
    expect(Object.is((parsed[0] as { min?: number }).min, 0)).toBe(true);
    expect(ok(JSON.stringify(serializeQuestions(parsed)))).toEqual(parsed);
  });

  it('drops unknown properties and never throws', () => {
    expect(
      serializeQuestions([{ type: 'textbox', name: 'a', extra: 1 } as unknown as Question]),
    ).toEqual([{ type: 'textbox', name: 'a' }]);
    expect(serializeQuestions(null as unknown as Question[])).toEqual([]);
    expect(serializeQuestions([null, 3] as unknown as Question[])).toEqual([]);
  });
});
