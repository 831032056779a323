import { createContext, useContext } from 'react';
import type { QuestionForm } from './useQuestionForm.js';

export const FormContext = createContext<QuestionForm | null>(null);

export function useForm(): QuestionForm {
  const form = useContext(FormContext);
  if (!form) throw new Error('a question field is rendered outside a QuestionFormFields');
  return form;
}
