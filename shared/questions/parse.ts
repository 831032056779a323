// parseQuestions: from untrusted JSON (an array, or its text) to checked, canonical question
// definitions, or the complete list of problems found. Never throws.

import { ProblemList, describeJsonType, readType } from './definition-context.js';
import type { QuestionContext } from './definition-context.js';
import { DefinitionReader } from './definition.js';
import {
  fieldTable,
  indexesOfNonLists,
  listsUsedAsNumbers,
  planFormulas,
  reach,
} from './formula-graph.js';
import { parseFormulaCached } from './formula.js';
import { isPlainObject, parseJsonText, quote } from './json.js';
import type { JsonObject } from './json.js';
import { NUMERIC_TYPES } from './properties.js';
import { QUESTION_NAME_PATTERN } from './types.js';
import type { FormulaQuestion, GroupQuestion, ParseQuestionsResult, Question } from './types.js';

interface GroupContext extends QuestionContext {
  /** "group \"sample_group\"" or "the group at position 4". */
  asGroup: string;
}

class DefinitionWalker {
  /** Every valid name already used, with the label of the question using it. */
  private readonly seen = new Map<string, string>();
  /** Every name written in the definitions, valid or not, to avoid follow-up noise. */
  readonly namesWritten = new Set<string>();
  /** Context of each question kept in the result, by name. */
  readonly contexts = new Map<string, QuestionContext>();

  constructor(
    readonly problems: ProblemList,
    private readonly options: ParseOptions = {},
  ) {}

  read(raw: unknown, index: number, group: GroupContext | null): JsonObject | null {
    let context: QuestionContext = group
      ? {
          path: `${group.path}.questions[${index}]`,
          label: `question ${index + 1} in ${group.asGroup}`,
          inGroup: true,
        }
      : { path: `[${index}]`, label: `question ${index + 1}`, inGroup: false };
    if (!isPlainObject(raw)) {
      this.problems.add(
        context,
        null,
        `must be an object with "type" and "name", not ${describeJsonType(raw)}`,
      );
      return null;
    }
    const name = this.readName(raw, context);
    if (name !== null) {
      context = group
        ? {
            path: `${group.path}.${name}`,
            label: `question ${quote(name)} in ${group.asGroup}`,
            inGroup: true,
          }
        : { path: name, label: `question ${quote(name)}`, inGroup: false };
      this.seen.set(name, context.label);
      this.contexts.set(name, context);
    }
    const type = readType(raw, context, this.problems);
    if (type === null) return null;
    const reader = new DefinitionReader(
      raw,
      type,
      name ?? '',
      context,
      this.problems,
      this.options,
    );
    reader.checkUnknownProperties();
    reader.common();
    switch (type) {
      case 'radio':
      case 'checkbox':
      case 'dropdown':
        reader.choices();
        break;
      case 'radio_report_problem':
        reader.reportProblem();
        break;
      case 'textbox':
      case 'textarea':
        reader.text();
        break;
      case 'number':
      case 'number_float':
        reader.numeric();
        break;
      case 'formula':
        reader.formula();
        break;
      case 'group': {
        const asGroup =
          name !== null ? `group ${quote(name)}` : `the group at position ${index + 1}`;
        const groupContext: GroupContext = { ...context, asGroup };
        reader.group((fields) =>
          fields
            .map((field, j) => this.read(field, j, groupContext))
            .filter((field): field is JsonObject => field !== null),
        );
        break;
      }
    }
    return name === null ? null : reader.result();
  }

  /** The question's name when it is valid and not used before; otherwise reports and returns null. */
  private readName(raw: JsonObject, context: QuestionContext): string | null {
    if (!Object.prototype.hasOwnProperty.call(raw, 'name')) {
      this.problems.add(context, 'name', 'property "name" is missing');
      return null;
    }
    const name = raw['name'];
    if (typeof name !== 'string') {
      this.problems.add(
        context,
        'name',
        `property "name" must be text, not ${describeJsonType(name)}`,
      );
      return null;
    }
    this.namesWritten.add(name);
    if (name === '') {
      this.problems.add(context, 'name', 'property "name" is empty');
      return null;
    }
    if (!QUESTION_NAME_PATTERN.test(name)) {
      this.problems.add(
        context,
        'name',
        `property "name" is ${quote(name)}; a name must start with a letter A to Z (either case) or _ and hold only those, digits and _ (formulas refer to questions by name)`,
      );
      return null;
    }
    if (name === '__proto__') {
      this.problems.add(context, 'name', 'property "name" is "__proto__", which is reserved');
      return null;
    }
    const previous = this.seen.get(name);
    if (previous !== undefined) {
      this.problems.add(
        context,
        'name',
        `the name ${quote(name)} is already used by ${previous}; names must be unique, also across groups`,
      );
      return null;
    }
    return name;
  }
}

export interface ParseOptions {
  /**
   * A list read back from the database, saved under the rules of its day: a rule added since
   * (an index on a value that is not a list; a pattern valid only inside `^(?:…)$`) is not
   * applied, so a tool saved before it keeps working (that formula stays blank, that pattern
   * checks nothing, as in a browser) instead of failing to load.
   */
  stored?: boolean;
}

function allFormulas(
  questions: Question[],
): { question: FormulaQuestion; group: GroupQuestion | null }[] {
  const found: { question: FormulaQuestion; group: GroupQuestion | null }[] = [];
  for (const question of questions) {
    if (question.type === 'formula') found.push({ question, group: null });
    if (question.type === 'group' && Array.isArray(question.questions)) {
      for (const field of question.questions) {
        if (field.type === 'formula') found.push({ question: field, group: question });
      }
    }
  }
  return found;
}

/** Formula references: known, numeric, within reach; and no dependency cycles. */
function checkFormulaReferences(
  questions: Question[],
  walker: DefinitionWalker,
  options: ParseOptions,
): void {
  const table = fieldTable(questions);
  for (const { question, group } of allFormulas(questions)) {
    const context = walker.contexts.get(question.name);
    const parsed = parseFormulaCached(question.formula);
    if (!context || !parsed.ok) continue;
    const lists = new Set<string>();
    for (const name of parsed.names) {
      const info = table.get(name);
      if (!info) {
        // A name written on a question with its own problems was reported there already.
        if (!walker.namesWritten.has(name)) {
          walker.problems.add(
            context,
            'formula',
            `property "formula" uses ${quote(name)}, which is not the name of any question`,
          );
        }
        continue;
      }
      if (!NUMERIC_TYPES.includes(info.question.type)) {
        walker.problems.add(
          context,
          'formula',
          `property "formula" uses ${quote(name)}, a ${info.question.type} question; formulas can only use number, number_float and formula questions`,
        );
        continue;
      }
      if (reach(table, group, name) === 'list') lists.add(name);
    }
    for (const node of options.stored ? [] : indexesOfNonLists(parsed.ast, lists)) {
      const target = node.target;
      // A name that is no question, not a number or out of reach was reported above.
      if (target.kind === 'name') {
        const info = table.get(target.name);
        if (!info || !NUMERIC_TYPES.includes(info.question.type)) continue;
        if (reach(table, group, target.name) !== 'scalar') continue;
      }
      walker.problems.add(
        context,
        'formula',
        target.kind === 'name'
          ? `property "formula" uses ${quote(target.name)}[…], but ${quote(target.name)} is one number, not a list; only a field of a repeated group, used outside its group, is a list of values to index`
          : `property "formula" indexes a value that is not a list (at character ${node.position + 1} of ${quote(question.formula)}); only a field of a repeated group, used outside its group, is a list of values to index`,
      );
    }
    for (const name of listsUsedAsNumbers(parsed.ast, lists)) {
      walker.problems.add(
        context,
        'formula',
        `property "formula" uses ${quote(name)}, a field of a repeated group, as one number; outside its group it is a list of values: use sum(${name}), max(${name}), min(${name}) or ${name}[0]`,
      );
    }
  }
  for (const cycle of planFormulas(questions).cycles) {
    const first = cycle[0];
    const context = first === undefined ? undefined : walker.contexts.get(first);
    if (!context) continue;
    walker.problems.add(
      context,
      'formula',
      cycle.length === 2
        ? 'property "formula" uses its own value'
        : `property "formula" depends on itself through ${cycle.join(' -> ')}`,
    );
  }
}

function parseUnchecked(input: unknown, options: ParseOptions): ParseQuestionsResult {
  const json = parseJsonText(input);
  if (!json.ok) {
    return {
      ok: false,
      problems: [
        { path: '', message: `The question definitions are not valid JSON: ${json.error}` },
      ],
    };
  }
  if (!Array.isArray(json.value)) {
    return {
      ok: false,
      problems: [
        {
          path: '',
          message: `The question definitions must be a list (a JSON array) of questions, not ${describeJsonType(json.value)}`,
        },
      ],
    };
  }
  const walker = new DefinitionWalker(new ProblemList(), options);
  const questions = (json.value as unknown[])
    .map((raw, index) => walker.read(raw, index, null))
    .filter((question): question is JsonObject => question !== null) as unknown as Question[];
  checkFormulaReferences(questions, walker, options);
  const problems = walker.problems.problems;
  return problems.length > 0 ? { ok: false, problems } : { ok: true, questions };
}

/**
 * Checks question definitions (a list, or the JSON text of one) and returns them in canonical
 * form: NEMO's "float" becomes "number_float"; choice questions get `labels` (copied from
 * `choices` when absent); radio_report_problem gets choices ["Yes", "No"] and labels
 * ["Yes", "No"] when absent; textarea gets rows 2 when absent; a single-string checkbox
 * default_value becomes a list. Collects every problem instead of stopping at the first.
 */
export function parseQuestions(input: unknown, options: ParseOptions = {}): ParseQuestionsResult {
  try {
    return parseUnchecked(input, options);
  } catch {
    return {
      ok: false,
      problems: [{ path: '', message: 'The question definitions could not be read.' }],
    };
  }
}
