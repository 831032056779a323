// How formulas see other questions, and the order to compute them in.
//
// Scope rules: a formula sees top-level questions as single values, and a field of a group
// it is not in as a list (one value per answered repetition), as DESIGN.md and NEMO have it: a
// group field referenced from outside its group is a list, from the top level or from another
// group alike. A formula inside a group sees the fields of its own group as single values of
// the same repetition.

import { parseFormulaCached } from './formula.js';
import type { FormulaNode } from './formula.js';
import type { FormulaQuestion, GroupQuestion, Question } from './types.js';

export interface FieldInfo {
  question: Question;
  /** The group holding the question, or null at top level. */
  group: GroupQuestion | null;
}

/** Every question by name, top level and inside groups; the first definition of a name wins. */
export function fieldTable(questions: readonly Question[]): Map<string, FieldInfo> {
  const table = new Map<string, FieldInfo>();
  const add = (question: Question, group: GroupQuestion | null): void => {
    if (
      typeof question.name === 'string' &&
      question.name !== '__proto__' &&
      !table.has(question.name)
    ) {
      table.set(question.name, { question, group });
    }
  };
  for (const question of questions) {
    if (!question || typeof question !== 'object') continue;
    add(question, null);
    if (question.type === 'group' && Array.isArray(question.questions)) {
      for (const field of question.questions) {
        if (field && typeof field === 'object') add(field, question);
      }
    }
  }
  return table;
}

export type Reach = 'scalar' | 'list' | 'unknown';

/** How a formula placed in `from` (a group, or null at top level) sees `name`. */
export function reach(
  table: Map<string, FieldInfo>,
  from: GroupQuestion | null,
  name: string,
): Reach {
  const info = table.get(name);
  if (!info) return 'unknown';
  if (info.group === null) return 'scalar';
  if (info.group === from) return 'scalar';
  return 'list';
}

export interface PlannedFormula {
  question: FormulaQuestion;
  group: GroupQuestion | null;
  ast: FormulaNode;
  names: string[];
}

export interface FormulaPlan {
  /** Parsed formulas outside any cycle, dependencies first. */
  order: PlannedFormula[];
  /** Each cycle as the chain of names, first name repeated at the end (a -> b -> a). */
  cycles: string[][];
}

/** Orders formulas so that each comes after the formulas it uses; finds dependency cycles. */
export function planFormulas(questions: readonly Question[]): FormulaPlan {
  const table = fieldTable(questions);
  const planned = new Map<string, PlannedFormula>();
  for (const [name, info] of table) {
    if (info.question.type !== 'formula') continue;
    const parsed = parseFormulaCached(info.question.formula);
    if (!parsed.ok) continue;
    planned.set(name, {
      question: info.question,
      group: info.group,
      ast: parsed.ast,
      names: parsed.names,
    });
  }

  const order: PlannedFormula[] = [];
  const cycles: string[][] = [];
  const inCycle = new Set<string>();
  const state = new Map<string, 'visiting' | 'done'>();

  // Iterative depth-first search: definitions may hold many formulas in a chain.
  for (const start of planned.keys()) {
    if (state.has(start)) continue;
    const stack: { name: string; next: number }[] = [{ name: start, next: 0 }];
    state.set(start, 'visiting');
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      const item = planned.get(frame.name)!;
      const dependencies = item.names.filter((dep) => planned.has(dep));
      if (frame.next < dependencies.length) {
        const dep = dependencies[frame.next++];
        const depState = state.get(dep);
        if (depState === undefined) {
          state.set(dep, 'visiting');
          stack.push({ name: dep, next: 0 });
        } else if (depState === 'visiting') {
          const from = stack.findIndex((f) => f.name === dep);
          const chain = stack.slice(from).map((f) => f.name);
          chain.push(dep);
          cycles.push(chain);
          for (const name of chain) inCycle.add(name);
        }
        continue;
      }
      stack.pop();
      state.set(frame.name, 'done');
      if (!inCycle.has(frame.name)) order.push(item);
    }
  }
  return { order, cycles };
}

/**
 * Names of lists (group fields seen from outside their group) that the formula uses where one
 * number is needed: anywhere but directly inside sum(), max(), min() or before an index.
 */
export function listsUsedAsNumbers(ast: FormulaNode, lists: ReadonlySet<string>): string[] {
  const misused = new Set<string>();
  const visit = (node: FormulaNode, listAllowed: boolean): void => {
    switch (node.kind) {
      case 'number':
        return;
      case 'name':
        if (lists.has(node.name) && !listAllowed) misused.add(node.name);
        return;
      case 'unary':
        visit(node.operand, false);
        return;
      case 'binary':
        visit(node.left, false);
        visit(node.right, false);
        return;
      case 'call': {
        const takesLists = node.name === 'sum' || node.name === 'max' || node.name === 'min';
        for (const arg of node.args) visit(arg, takesLists);
        return;
      }
      case 'index':
        visit(node.target, true);
        visit(node.index, false);
        return;
    }
  };
  visit(ast, false);
  return [...misused];
}

/**
 * The index expressions of a formula whose target is not a list name: only a group field seen
 * from outside its group is a list, so indexing anything else (a question that is one number,
 * a result, an item of a list) can never give a value.
 */
export function indexesOfNonLists(
  ast: FormulaNode,
  lists: ReadonlySet<string>,
): (FormulaNode & { kind: 'index' })[] {
  const found: (FormulaNode & { kind: 'index' })[] = [];
  const visit = (node: FormulaNode): void => {
    switch (node.kind) {
      case 'number':
      case 'name':
        return;
      case 'unary':
        visit(node.operand);
        return;
      case 'binary':
        visit(node.left);
        visit(node.right);
        return;
      case 'call':
        node.args.forEach(visit);
        return;
      case 'index':
        if (node.target.kind !== 'name' || !lists.has(node.target.name)) found.push(node);
        visit(node.target);
        visit(node.index);
        return;
    }
  };
  visit(ast);
  return found;
}
