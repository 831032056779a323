// The question definition language of spec 000 ("Question definition") and the canonical
// answer shape ("Answer structure"), as TypeScript types.

export const QUESTION_TYPES = [
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
] as const;

export type QuestionType = (typeof QUESTION_TYPES)[number];

/** Question names are formula identifiers, so they follow identifier rules. */
export const QUESTION_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** radio_report_problem always offers these two choices; the first one files the report. */
export const REPORT_PROBLEM_CHOICES: readonly string[] = ['Yes', 'No'];

export const TEXTAREA_DEFAULT_ROWS = 2;

/** Properties every question type accepts. */
export interface QuestionCommon {
  name: string;
  title?: string;
  title_html?: string;
  required?: boolean;
  help?: string;
  'max-width'?: number;
  /** NEMO's place of the question in its form's grid: kept as given, not used for layout here. */
  form_row?: number;
  row_cell?: number;
}

export interface RadioQuestion extends QuestionCommon {
  type: 'radio';
  choices: string[];
  /** Filled with a copy of `choices` by parseQuestions when absent. */
  labels?: string[];
  default_value?: string;
  inline?: boolean;
}

export interface ReportProblemOptions {
  problem_description?: string;
  force_shutdown?: boolean;
  safety_hazard?: boolean;
}

export interface RadioReportProblemQuestion extends QuestionCommon {
  type: 'radio_report_problem';
  /** Always ["Yes", "No"] after parseQuestions. */
  choices?: string[];
  /** ["Yes", "No"] after parseQuestions when absent. */
  labels?: string[];
  options?: ReportProblemOptions;
}

export interface CheckboxQuestion extends QuestionCommon {
  type: 'checkbox';
  choices: string[];
  labels?: string[];
  /** Pre-selected choices. A single string in a definition is read as a one-element list. */
  default_value?: string[];
  inline?: boolean;
}

export interface DropdownQuestion extends QuestionCommon {
  type: 'dropdown';
  choices: string[];
  labels?: string[];
  default_value?: string;
}

export interface TextboxQuestion extends QuestionCommon {
  type: 'textbox';
  maxlength?: number;
  pattern?: string;
  placeholder?: string;
  prefix?: string;
  suffix?: string;
}

export interface TextareaQuestion extends QuestionCommon {
  type: 'textarea';
  /** 2 after parseQuestions when absent. */
  rows?: number;
  /** NEMO's: the box grows with the lines of its text, from `rows` up (shownRows). */
  auto_resize?: boolean;
  maxlength?: number;
  pattern?: string;
  placeholder?: string;
}

export interface NumberQuestion extends QuestionCommon {
  type: 'number';
  min?: number;
  max?: number;
  /** Answers are min (or 0) plus a whole number of steps, as a browser's number input takes them. */
  step?: number;
  consumable?: string;
  prefix?: string;
  suffix?: string;
  placeholder?: string;
}

export interface NumberFloatQuestion extends QuestionCommon {
  type: 'number_float';
  min?: number;
  max?: number;
  /** As NumberQuestion's. */
  step?: number;
  precision?: number;
  consumable?: string;
  prefix?: string;
  suffix?: string;
  placeholder?: string;
}

export interface FormulaQuestion extends QuestionCommon {
  type: 'formula';
  formula: string;
  precision?: number;
  suffix?: string;
}

/** Questions allowed inside a group: no nested group, no radio_report_problem. */
export type GroupFieldQuestion =
  | RadioQuestion
  | CheckboxQuestion
  | DropdownQuestion
  | TextboxQuestion
  | TextareaQuestion
  | NumberQuestion
  | NumberFloatQuestion
  | FormulaQuestion;

export interface GroupQuestion extends QuestionCommon {
  type: 'group';
  questions: GroupFieldQuestion[];
  /** Maximum repetitions. Absent: NEMO shows no "Add" control, so exactly one repetition at most. */
  max_number?: number;
  /** The text of the button that adds a repetition ("Add another <title>" when absent). */
  group_add_button_name?: string;
}

export type Question = GroupFieldQuestion | RadioReportProblemQuestion | GroupQuestion;

export type ChoiceQuestion =
  RadioQuestion | RadioReportProblemQuestion | CheckboxQuestion | DropdownQuestion;

export type NumericInputQuestion = NumberQuestion | NumberFloatQuestion;

export interface DefinitionProblem {
  /** Where the problem is, e.g. "sample_group.sample_name.pattern" or "[3].type"; "" for the list. */
  path: string;
  /** Plain words naming the question and the property. */
  message: string;
}

export type ParseQuestionsResult =
  { ok: true; questions: Question[] } | { ok: false; problems: DefinitionProblem[] };

// ---- answers ----

export type AnswerGroup = Record<string, string | number | string[] | null>;
export type AnswerValue = string | number | string[] | AnswerGroup[] | null;
/**
 * Canonical answers, keyed by question name. Unanswered simple questions and formulas that
 * cannot be computed are absent (never null); a checkbox is always a list ([] when nothing is
 * chosen); a group is always a list of repetitions. The same holds inside each repetition.
 */
export type Answers = Record<string, AnswerValue>;

export type AnswerRule =
  | 'required'
  | 'maxlength'
  | 'pattern'
  | 'min'
  | 'max'
  | 'integer'
  | 'number'
  | 'precision'
  | 'step'
  | 'choices'
  | 'max_number'
  | 'type'
  | 'formula';

export interface AnswerProblem {
  /** ['experiment_title'] or ['sample_group', 1, 'sample_name'] (1 = second repetition). */
  path: (string | number)[];
  /** Name of the question the problem is about. */
  question: string;
  rule: AnswerRule;
  /** Plain words for a person, naming the question's title (or name). */
  message: string;
}

export type ValidateAnswersResult =
  { ok: true; answers: Answers } | { ok: false; answers: Answers; problems: AnswerProblem[] };

export interface ProblemReportDraft {
  question: string;
  description: string;
  force_shutdown: boolean;
  safety_hazard: boolean;
}

export interface ConsumableDraft {
  question: string;
  consumable: string;
  quantity: number;
}
