// What to call a question in front of a person, and its choices.

import { REPORT_PROBLEM_CHOICES } from './types.js';
import type { Question } from './types.js';

const BASIC_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** Plain text of a small HTML fragment: tags removed, basic entities decoded, spaces collapsed. */
export function htmlToPlainText(html: string): string {
  const withoutTags = html.replace(/<[^>]*>/g, ' ');
  const decoded = withoutTags.replace(
    /&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g,
    (whole, body: string) => {
      if (body.startsWith('#x') || body.startsWith('#X')) {
        const code = parseInt(body.slice(2), 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      if (body.startsWith('#')) {
        const code = parseInt(body.slice(1), 10);
        return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return BASIC_ENTITIES[body] ?? whole;
    },
  );
  return decoded.replace(/\s+/g, ' ').trim();
}

/**
 * The question's title; else the text of its title_html; else its name. (The text of
 * title_html reads better in a message than a technical name like "sample_elements".)
 */
export function questionLabel(question: Question): string {
  try {
    if (typeof question.title === 'string' && question.title.trim() !== '')
      return question.title.trim();
    if (typeof question.title_html === 'string') {
      const text = htmlToPlainText(question.title_html);
      if (text !== '') return text;
    }
    return typeof question.name === 'string' ? question.name : '';
  } catch {
    return '';
  }
}

/** The choices of a radio, radio_report_problem, checkbox or dropdown question; [] otherwise. */
export function choicesOf(question: Question): string[] {
  if (question.type === 'radio_report_problem') return REPORT_PROBLEM_CHOICES.slice();
  if (question.type === 'radio' || question.type === 'checkbox' || question.type === 'dropdown') {
    return Array.isArray(question.choices) ? question.choices : [];
  }
  return [];
}

/** The label shown for each choice: `labels` when given, else the choices themselves. */
export function choiceLabels(question: Question): string[] {
  const choices = choicesOf(question);
  if (
    question.type === 'radio' ||
    question.type === 'radio_report_problem' ||
    question.type === 'checkbox' ||
    question.type === 'dropdown'
  ) {
    const labels = question.labels;
    if (Array.isArray(labels) && labels.length === choices.length) return labels;
  }
  return choices;
}
