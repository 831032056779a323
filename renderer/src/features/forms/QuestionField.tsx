import type { ReactElement } from 'react';
import type { Question } from '../../../../shared/questions/index.js';
import { CheckboxField, DropdownField, RadioField } from './ChoiceFields.js';
import { FormulaField } from './FormulaField.js';
import { GroupField } from './GroupField.js';
import { NumberField } from './NumberField.js';
import { TextareaField, TextboxField } from './TextFields.js';
import type { Path } from './values.js';

/** The control for one question of spec 000, by its type. */
export function QuestionField({
  question,
  path,
}: {
  question: Question;
  path: Path;
}): ReactElement {
  switch (question.type) {
    case 'radio':
    case 'radio_report_problem':
      return <RadioField question={question} path={path} />;
    case 'checkbox':
      return <CheckboxField question={question} path={path} />;
    case 'dropdown':
      return <DropdownField question={question} path={path} />;
    case 'textbox':
      return <TextboxField question={question} path={path} />;
    case 'textarea':
      return <TextareaField question={question} path={path} />;
    case 'number':
    case 'number_float':
      return <NumberField question={question} path={path} />;
    case 'formula':
      return <FormulaField question={question} path={path} />;
    case 'group':
      return <GroupField question={question} />;
  }
}
