// Evaluation of parsed formulas. Arithmetic follows Python where NEMO users would notice:
// `%` is floored (its sign follows the divisor: -7 % 3 == 2), `**` is right-associative and
// binds tighter than a unary minus on its left. Everything that Python raises for (division
// by zero, sqrt of a negative number, max() of an empty list) and every non-finite result is
// an error here, never NaN or Infinity.

import { cleanComputedNumber, roundHalfAwayFromZero } from './decimal.js';
import { parseFormulaCached } from './formula.js';
import type { FormulaNode } from './formula.js';
import { hasOwn } from './json.js';

export type FormulaValue = number | number[];
export type FormulaEvalResult = { ok: true; value: number } | { ok: false; error: string };

/** Returns the value of a name: a number, a list (group field), null (unanswered) or undefined (unknown). */
export type FormulaLookup = (name: string) => unknown;

const MAX_ROUND_PLACES = 20;

class FormulaEvalError extends Error {}

function fail(message: string): never {
  throw new FormulaEvalError(message);
}

function finite(value: number, what: string): number {
  if (!Number.isFinite(value)) fail(`${what} is too large to compute`);
  return value === 0 ? 0 : value;
}

function describeNode(node: FormulaNode): string {
  if (node.kind === 'name') return `'${node.name}'`;
  if (node.kind === 'call') return `${node.name}(...)`;
  return 'a value';
}

function readName(name: string, lookup: FormulaLookup): FormulaValue {
  const value = lookup(name);
  if (value === undefined) fail(`unknown name '${name}'`);
  if (value === null) fail(`'${name}' is not answered`);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(`'${name}' is not a finite number`);
    return value;
  }
  if (Array.isArray(value)) {
    const list: number[] = [];
    for (const item of value as unknown[]) {
      if (typeof item !== 'number' || !Number.isFinite(item)) {
        fail(`'${name}' holds a value that is not a number`);
      }
      list.push(item);
    }
    return list;
  }
  return fail(`'${name}' is not a number`);
}

class Evaluator {
  constructor(private readonly lookup: FormulaLookup) {}

  scalar(node: FormulaNode): number {
    const value = this.value(node);
    if (Array.isArray(value)) {
      fail(
        `${describeNode(node)} is a list of values (a field of a repeated group); use sum(), max(), min() or an index such as ${node.kind === 'name' ? node.name : 'list'}[0]`,
      );
    }
    return value;
  }

  value(node: FormulaNode): FormulaValue {
    switch (node.kind) {
      case 'number':
        return node.value;
      case 'name':
        return readName(node.name, this.lookup);
      case 'unary': {
        const operand = this.scalar(node.operand);
        return node.operator === '-' ? finite(-operand, 'the result') : operand;
      }
      case 'binary':
        return this.binary(node.operator, this.scalar(node.left), this.scalar(node.right));
      case 'call':
        return this.call(node.name, node.args);
      case 'index':
        return this.index(node.target, node.index);
    }
  }

  private binary(operator: string, left: number, right: number): number {
    switch (operator) {
      case '+':
        return finite(left + right, 'the sum');
      case '-':
        return finite(left - right, 'the difference');
      case '*':
        return finite(left * right, 'the product');
      case '/':
        if (right === 0) fail('division by zero');
        return finite(left / right, 'the quotient');
      case '%': {
        if (right === 0) fail('modulo by zero');
        let rest = left % right;
        if (rest !== 0 && rest < 0 !== right < 0) rest += right;
        return finite(rest, 'the remainder');
      }
      case '**':
        if (left === 0 && right < 0) fail('0 cannot be raised to a negative power');
        if (left < 0 && !Number.isInteger(right)) {
          fail('a negative number cannot be raised to a fractional power');
        }
        return finite(left ** right, 'the power');
      default:
        return fail(`unknown operator '${operator}'`);
    }
  }

  private call(name: string, args: FormulaNode[]): number {
    switch (name) {
      case 'round': {
        const value = this.scalar(args[0]);
        const places = args.length > 1 ? this.scalar(args[1]) : 0;
        if (!Number.isInteger(places) || Math.abs(places) > MAX_ROUND_PLACES) {
          fail(
            `round() takes a whole number of decimal places between -${MAX_ROUND_PLACES} and ${MAX_ROUND_PLACES}`,
          );
        }
        return finite(roundHalfAwayFromZero(value, places), 'the rounded value');
      }
      case 'floor':
        return finite(Math.floor(cleanComputedNumber(this.scalar(args[0]))), 'the result');
      case 'ceil':
        return finite(Math.ceil(cleanComputedNumber(this.scalar(args[0]))), 'the result');
      case 'abs':
        return finite(Math.abs(this.scalar(args[0])), 'the result');
      case 'trunc':
        return finite(Math.trunc(cleanComputedNumber(this.scalar(args[0]))), 'the result');
      case 'sqrt': {
        const value = this.scalar(args[0]);
        if (value < 0) fail('sqrt() of a negative number');
        return finite(Math.sqrt(value), 'the result');
      }
      case 'sum': {
        let total = 0;
        for (const item of this.flatten(args)) total = finite(total + item, 'the sum');
        return total;
      }
      case 'max':
      case 'min': {
        const items = this.flatten(args);
        if (items.length === 0) fail(`${name}() of an empty list`);
        let best = items[0];
        for (const item of items) {
          if (name === 'max' ? item > best : item < best) best = item;
        }
        return best;
      }
      default:
        return fail(`unknown function '${name}'`);
    }
  }

  private flatten(args: FormulaNode[]): number[] {
    const items: number[] = [];
    for (const arg of args) {
      const value = this.value(arg);
      if (Array.isArray(value)) items.push(...value);
      else items.push(value);
    }
    return items;
  }

  private index(targetNode: FormulaNode, indexNode: FormulaNode): number {
    const target = this.value(targetNode);
    if (!Array.isArray(target)) {
      fail(`${describeNode(targetNode)} is a single value, not a list, so it cannot be indexed`);
    }
    const index = this.scalar(indexNode);
    if (!Number.isInteger(index)) fail(`a list index must be a whole number, not ${index}`);
    const position = index < 0 ? target.length + index : index;
    const item = target[position];
    if (position < 0 || item === undefined) {
      fail(
        `index ${index} is out of range for ${describeNode(targetNode)}, which holds ${target.length} value${target.length === 1 ? '' : 's'}`,
      );
    }
    return item;
  }
}

/** Evaluates a parsed formula; never throws. The value is not rounded. */
export function evaluateFormulaAst(ast: FormulaNode, lookup: FormulaLookup): FormulaEvalResult {
  try {
    const evaluator = new Evaluator(lookup);
    const value = evaluator.value(ast);
    if (Array.isArray(value)) {
      return {
        ok: false,
        error: `the result is a list of values, not one number; use sum(), max() or min()`,
      };
    }
    return { ok: true, value };
  } catch (error) {
    if (error instanceof FormulaEvalError) return { ok: false, error: error.message };
    return { ok: false, error: 'the formula could not be evaluated' };
  }
}

/**
 * Parses and evaluates a formula against a scope of values (number, list of numbers, or
 * null/undefined for unanswered). Never throws on any string or scope. The value is not
 * rounded: computeFormulas applies the formula question's precision.
 */
export function evaluateFormula(
  source: string,
  scope: Record<string, FormulaValue | null | undefined>,
): FormulaEvalResult {
  try {
    if (typeof source !== 'string') return { ok: false, error: 'the formula must be text' };
    const parsed = parseFormulaCached(source);
    if (!parsed.ok) {
      return { ok: false, error: `${parsed.error} (at character ${parsed.position + 1})` };
    }
    const lookup: FormulaLookup = (name) => {
      if (typeof scope !== 'object' || scope === null || !hasOwn(scope, name)) return undefined;
      return (scope as Record<string, unknown>)[name];
    };
    return evaluateFormulaAst(parsed.ast, lookup);
  } catch {
    return { ok: false, error: 'the formula could not be evaluated' };
  }
}
