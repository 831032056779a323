// Usage questions (spec 000): definitions, answers, formulas, safe titles, side effects.
// Pure TypeScript: no Node, DOM or Electron.

export type {
  AnswerGroup,
  AnswerProblem,
  AnswerRule,
  Answers,
  AnswerValue,
  CheckboxQuestion,
  ChoiceQuestion,
  ConsumableDraft,
  DefinitionProblem,
  DropdownQuestion,
  FormulaQuestion,
  GroupFieldQuestion,
  GroupQuestion,
  NumberFloatQuestion,
  NumberQuestion,
  NumericInputQuestion,
  ParseQuestionsResult,
  ProblemReportDraft,
  Question,
  QuestionCommon,
  QuestionType,
  RadioQuestion,
  RadioReportProblemQuestion,
  ReportProblemOptions,
  TextareaQuestion,
  TextboxQuestion,
  ValidateAnswersResult,
} from './types.js';
export {
  QUESTION_NAME_PATTERN,
  QUESTION_TYPES,
  REPORT_PROBLEM_CHOICES,
  TEXTAREA_DEFAULT_ROWS,
} from './types.js';

export { parseQuestions, type ParseOptions } from './parse.js';
export { serializeQuestions } from './serialize.js';
export { initialAnswers, normalizeAnswers } from './answers.js';
export { answerLength, validateAnswers } from './validate.js';
export { groupHasRequiredField } from './usable.js';
export { computeFormulas } from './compute.js';
export {
  FORMULA_FUNCTIONS,
  FORMULA_MAX_DEPTH,
  FORMULA_MAX_LENGTH,
  parseFormula,
} from './formula.js';
export type { FormulaFunction, FormulaNode, FormulaParseResult } from './formula.js';
export { evaluateFormula } from './formula-eval.js';
export type { FormulaEvalResult, FormulaValue } from './formula-eval.js';
export { roundHalfAwayFromZero } from './decimal.js';
export { sanitizeTitleHtml } from './html.js';
export { consumablesFrom, effectQuestionNames, problemReportsFrom } from './effects.js';
export { choiceLabels, choicesOf, questionLabel } from './label.js';
export { matchesHtmlPattern } from './pattern.js';
