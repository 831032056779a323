/**
 * The page behind `npm run bench:forms` (not part of the app): renders the benchmark form with
 * the real form components and times it, beside a plain HTML form of the same inputs with the
 * browser's own constraint validation as the reference.
 */
import type { ReactElement } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { benchAnswers, benchQuestions } from '../../../bench/formFixture.js';
import { parseQuestions, validateAnswers } from '../../../shared/questions/index.js';
import type { Answers, Question } from '../../../shared/questions/index.js';
import { QuestionFormFields } from '../features/forms/QuestionFormFields.js';
import { useQuestionForm } from '../features/forms/useQuestionForm.js';
import '../styles/app.css';

interface BenchResult {
  renderMs: number;
  commitMs: number;
  validateMs: number;
  nativeMs: number;
  plainRenderMs: number;
  fields: number;
  error?: string;
}

const nextPaint = (): Promise<void> =>
  new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));

function median(fn: () => void, runs = 50): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(runs / 2)] ?? NaN;
}

function BenchForm({
  questions,
  answers,
}: {
  questions: Question[];
  answers: Answers;
}): ReactElement {
  const form = useQuestionForm(questions, answers);
  return (
    <form aria-label="benchmark form">
      <QuestionFormFields form={form} />
    </form>
  );
}

/** The same inputs as plain HTML with native constraints (required, pattern, min, max, step). */
function plainForm(questions: Question[], answers: Answers): HTMLFormElement {
  const form = document.createElement('form');
  const input = (q: Question, value: unknown): void => {
    const el = document.createElement('input');
    el.name = q.name;
    if (q.required) el.required = true;
    if (q.type === 'textbox') {
      if (q.pattern) el.pattern = q.pattern;
      if (q.maxlength !== undefined) el.maxLength = q.maxlength;
    } else if (q.type === 'number' || q.type === 'number_float') {
      el.type = 'number';
      if (q.min !== undefined) el.min = String(q.min);
      if (q.max !== undefined) el.max = String(q.max);
      el.step =
        q.type === 'number' ? '1' : q.precision !== undefined ? String(10 ** -q.precision) : 'any';
    } else if (q.type === 'radio' || q.type === 'checkbox' || q.type === 'dropdown') {
      el.type = 'text';
    } else {
      return;
    }
    el.value = Array.isArray(value)
      ? value.join(',')
      : typeof value === 'string' || typeof value === 'number'
        ? String(value)
        : '';
    const label = document.createElement('label');
    label.textContent = q.name;
    label.append(el);
    form.append(label);
  };
  for (const q of questions) {
    if (q.type === 'group') {
      const items = (answers[q.name] ?? []) as Answers[];
      for (const item of items) for (const f of q.questions) input(f, item[f.name]);
    } else {
      input(q, answers[q.name]);
    }
  }
  return form;
}

async function run(): Promise<BenchResult> {
  const parsed = parseQuestions(benchQuestions());
  if (!parsed.ok) throw new Error(parsed.problems[0]?.message);
  const answers = benchAnswers();
  const rootEl = document.getElementById('root')!;
  const t0 = performance.now();
  flushSync(() =>
    createRoot(rootEl).render(<BenchForm questions={parsed.questions} answers={answers} />),
  );
  const commitMs = performance.now() - t0;
  await nextPaint();
  const renderMs = performance.now() - t0;
  const fields = rootEl.querySelectorAll('input, select, textarea').length;
  const validateMs = median(() => validateAnswers(parsed.questions, answers));

  const t1 = performance.now();
  const form = plainForm(parsed.questions, answers);
  document.getElementById('plain')!.append(form);
  await nextPaint();
  const plainRenderMs = performance.now() - t1;
  const nativeMs = median(() => form.checkValidity());
  return { renderMs, commitMs, validateMs, nativeMs, plainRenderMs, fields };
}

run().then(
  (result) => Object.assign(window, { benchResult: result }),
  (error: unknown) =>
    Object.assign(window, {
      benchResult: {
        renderMs: 0,
        validateMs: 0,
        nativeMs: 0,
        plainRenderMs: 0,
        fields: 0,
        error: String(error),
      },
    }),
);
