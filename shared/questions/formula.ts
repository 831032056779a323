// Parser of the formula language: a small, Python-flavoured arithmetic over question names.
//
//   expression := additive
//   additive   := term (("+" | "-") term)*
//   term       := unary (("*" | "/" | "%") unary)*
//   unary      := ("-" | "+") unary | power
//   power      := postfix ("**" unary)?          right-associative; -2**2 is -(2**2) = -4
//   postfix    := primary ("[" expression "]")*  indexing a list (a group field)
//   primary    := number | name | function "(" arguments ")" | "(" expression ")"
//
// Numbers: 12, 1.5, .5, 1., 1e3, 2.5E-3. No eval, no RegExp over the source: a hand-written
// scanner. Limits keep hostile input cheap: at most FORMULA_MAX_LENGTH characters and
// FORMULA_MAX_DEPTH levels of nesting, reported as errors.

export const FORMULA_MAX_LENGTH = 2000;
export const FORMULA_MAX_DEPTH = 100;

export const FORMULA_FUNCTIONS = [
  'round',
  'floor',
  'ceil',
  'abs',
  'trunc',
  'sqrt',
  'sum',
  'max',
  'min',
] as const;
export type FormulaFunction = (typeof FORMULA_FUNCTIONS)[number];

const ARITY: Record<FormulaFunction, { min: number; max: number }> = {
  round: { min: 1, max: 2 },
  floor: { min: 1, max: 1 },
  ceil: { min: 1, max: 1 },
  abs: { min: 1, max: 1 },
  trunc: { min: 1, max: 1 },
  sqrt: { min: 1, max: 1 },
  sum: { min: 1, max: Infinity },
  max: { min: 1, max: Infinity },
  min: { min: 1, max: Infinity },
};

export type BinaryOperator = '+' | '-' | '*' | '/' | '%' | '**';

/** Every node carries the 0-based character position where it starts. */
export type FormulaNode =
  | { kind: 'number'; value: number; position: number }
  | { kind: 'name'; name: string; position: number }
  | { kind: 'unary'; operator: '-' | '+'; operand: FormulaNode; position: number }
  | {
      kind: 'binary';
      operator: BinaryOperator;
      left: FormulaNode;
      right: FormulaNode;
      position: number;
    }
  | { kind: 'call'; name: FormulaFunction; args: FormulaNode[]; position: number }
  | { kind: 'index'; target: FormulaNode; index: FormulaNode; position: number };

/** `position` is the 0-based character index of the error. `names` are unique, in order. */
export type FormulaParseResult =
  { ok: true; ast: FormulaNode; names: string[] } | { ok: false; error: string; position: number };

type Token =
  | { kind: 'number'; value: number; position: number; text: string }
  | { kind: 'name'; text: string; position: number }
  | { kind: 'op'; text: string; position: number }
  | { kind: 'end'; text: ''; position: number };

class FormulaSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

function isDigit(ch: string): boolean {
  return ch >= '0' && ch <= '9';
}

function isNameStart(ch: string): boolean {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch === '_';
}

function isNamePart(ch: string): boolean {
  return isNameStart(ch) || isDigit(ch);
}

function isFormulaFunction(name: string): name is FormulaFunction {
  return (FORMULA_FUNCTIONS as readonly string[]).includes(name);
}

function describeChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f)
    return `control character U+${code.toString(16).padStart(4, '0')}`;
  return `'${ch}'`;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source.charAt(i);
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (isDigit(ch) || (ch === '.' && isDigit(source.charAt(i + 1)))) {
      while (isDigit(source.charAt(i))) i++;
      if (source.charAt(i) === '.') {
        i++;
        while (isDigit(source.charAt(i))) i++;
      }
      const e = source.charAt(i);
      if (e === 'e' || e === 'E') {
        let j = i + 1;
        if (source.charAt(j) === '+' || source.charAt(j) === '-') j++;
        if (isDigit(source.charAt(j))) {
          while (isDigit(source.charAt(j))) j++;
          i = j;
        }
      }
      const text = source.slice(start, i);
      const value = Number(text);
      if (!Number.isFinite(value)) {
        throw new FormulaSyntaxError(`the number ${text} is too large`, start);
      }
      if (isNameStart(source.charAt(i))) {
        throw new FormulaSyntaxError(
          `an operator is missing between the number ${text} and the name after it`,
          i,
        );
      }
      tokens.push({ kind: 'number', value, position: start, text });
      continue;
    }
    if (isNameStart(ch)) {
      while (isNamePart(source.charAt(i))) i++;
      tokens.push({ kind: 'name', text: source.slice(start, i), position: start });
      continue;
    }
    if (ch === '*' && source.charAt(i + 1) === '*') {
      tokens.push({ kind: 'op', text: '**', position: start });
      i += 2;
      continue;
    }
    if (ch === '/' && source.charAt(i + 1) === '/') {
      throw new FormulaSyntaxError("'//' is not supported; use floor(a / b)", start);
    }
    if (ch === '^') {
      throw new FormulaSyntaxError("'^' is not supported; use ** for powers (2 ** 3)", start);
    }
    if ('+-*/%(),[]'.includes(ch)) {
      tokens.push({ kind: 'op', text: ch, position: start });
      i++;
      continue;
    }
    const full = String.fromCodePoint(source.codePointAt(i) ?? 0);
    throw new FormulaSyntaxError(`unexpected ${describeChar(full)}`, start);
  }
  tokens.push({ kind: 'end', text: '', position: source.length });
  return tokens;
}

function describeToken(token: Token): string {
  if (token.kind === 'end') return 'end of formula';
  if (token.kind === 'number') return `number ${token.text}`;
  if (token.kind === 'name') return `name '${token.text}'`;
  return `'${token.text}'`;
}

class Parser {
  private index = 0;
  private depth = 0;
  readonly names: string[] = [];

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index] ?? this.tokens[this.tokens.length - 1];
  }

  private next(): Token {
    const token = this.peek();
    if (this.index < this.tokens.length - 1) this.index++;
    return token;
  }

  private isOp(text: string): boolean {
    const token = this.peek();
    return token.kind === 'op' && token.text === text;
  }

  private expectOp(text: string, context: string): void {
    if (!this.isOp(text)) {
      const token = this.peek();
      throw new FormulaSyntaxError(
        `expected '${text}' ${context} but found ${describeToken(token)}`,
        token.position,
      );
    }
    this.next();
  }

  private enter(position: number): void {
    this.depth++;
    if (this.depth > FORMULA_MAX_DEPTH) {
      throw new FormulaSyntaxError(
        `the formula is nested too deeply (more than ${FORMULA_MAX_DEPTH} levels)`,
        position,
      );
    }
  }

  private leave(): void {
    this.depth--;
  }

  parseFormula(): FormulaNode {
    const first = this.peek();
    if (first.kind === 'end') throw new FormulaSyntaxError('the formula is empty', 0);
    const node = this.parseExpression();
    const rest = this.peek();
    if (rest.kind !== 'end') {
      const hint =
        rest.kind === 'op' && (rest.text === ')' || rest.text === ']')
          ? `unmatched '${rest.text}'`
          : `unexpected ${describeToken(rest)}; expected an operator`;
      throw new FormulaSyntaxError(hint, rest.position);
    }
    return node;
  }

  private parseExpression(): FormulaNode {
    this.enter(this.peek().position);
    let left = this.parseTerm();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.next();
      const right = this.parseTerm();
      left = {
        kind: 'binary',
        operator: op.text as '+' | '-',
        left,
        right,
        position: op.position,
      };
    }
    this.leave();
    return left;
  }

  private parseTerm(): FormulaNode {
    let left = this.parseUnary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = this.next();
      const right = this.parseUnary();
      left = {
        kind: 'binary',
        operator: op.text as '*' | '/' | '%',
        left,
        right,
        position: op.position,
      };
    }
    return left;
  }

  private parseUnary(): FormulaNode {
    if (this.isOp('-') || this.isOp('+')) {
      const op = this.next();
      this.enter(op.position);
      const operand = this.parseUnary();
      this.leave();
      return { kind: 'unary', operator: op.text as '-' | '+', operand, position: op.position };
    }
    return this.parsePower();
  }

  private parsePower(): FormulaNode {
    const base = this.parsePostfix();
    if (!this.isOp('**')) return base;
    const op = this.next();
    this.enter(op.position);
    const exponent = this.parseUnary();
    this.leave();
    return { kind: 'binary', operator: '**', left: base, right: exponent, position: op.position };
  }

  private parsePostfix(): FormulaNode {
    let node = this.parsePrimary();
    while (this.isOp('[')) {
      const open = this.next();
      const index = this.parseExpression();
      this.expectOp(']', 'to close the index');
      node = { kind: 'index', target: node, index, position: open.position };
    }
    return node;
  }

  private parsePrimary(): FormulaNode {
    const token = this.next();
    if (token.kind === 'number') {
      return { kind: 'number', value: token.value, position: token.position };
    }
    if (token.kind === 'name') {
      if (this.isOp('(')) return this.parseCall(token);
      if (!this.names.includes(token.text)) this.names.push(token.text);
      return { kind: 'name', name: token.text, position: token.position };
    }
    if (token.kind === 'op' && token.text === '(') {
      const inner = this.parseExpression();
      this.expectOp(')', `to close the '(' at position ${token.position + 1}`);
      return inner;
    }
    if (token.kind === 'end') {
      throw new FormulaSyntaxError(
        'the formula ends too early; a value is missing',
        token.position,
      );
    }
    throw new FormulaSyntaxError(
      `unexpected ${describeToken(token)}; expected a number, a name or '('`,
      token.position,
    );
  }

  private parseCall(nameToken: Token & { kind: 'name' }): FormulaNode {
    const name = nameToken.text;
    if (!isFormulaFunction(name)) {
      throw new FormulaSyntaxError(
        `unknown function '${name}'; available functions are ${FORMULA_FUNCTIONS.join(', ')}`,
        nameToken.position,
      );
    }
    this.next(); // "("
    const args: FormulaNode[] = [];
    if (!this.isOp(')')) {
      for (;;) {
        args.push(this.parseExpression());
        if (!this.isOp(',')) break;
        this.next();
      }
    }
    this.expectOp(')', `to close the call of ${name}()`);
    const arity = ARITY[name];
    if (args.length < arity.min || args.length > arity.max) {
      const expected =
        arity.max === Infinity
          ? `at least ${arity.min} argument`
          : arity.min === arity.max
            ? `exactly ${arity.min} argument`
            : `${arity.min} or ${arity.max} arguments`;
      throw new FormulaSyntaxError(
        `${name}() takes ${expected}, not ${args.length}`,
        nameToken.position,
      );
    }
    return { kind: 'call', name, args, position: nameToken.position };
  }
}

/** Parses a formula; never throws. */
export function parseFormula(source: string): FormulaParseResult {
  try {
    if (typeof source !== 'string') {
      return { ok: false, error: 'the formula must be text', position: 0 };
    }
    if (source.length > FORMULA_MAX_LENGTH) {
      return {
        ok: false,
        error: `the formula is too long (${source.length} characters; at most ${FORMULA_MAX_LENGTH})`,
        position: FORMULA_MAX_LENGTH,
      };
    }
    const parser = new Parser(tokenize(source));
    const ast = parser.parseFormula();
    return { ok: true, ast, names: parser.names };
  } catch (error) {
    if (error instanceof FormulaSyntaxError) {
      return { ok: false, error: error.message, position: error.position };
    }
    return { ok: false, error: 'the formula could not be read', position: 0 };
  }
}

const parseCache = new Map<string, FormulaParseResult>();
const PARSE_CACHE_LIMIT = 1000;

/** parseFormula with a small cache: answer checks re-read the same formulas many times. */
export function parseFormulaCached(source: string): FormulaParseResult {
  const cached = parseCache.get(source);
  if (cached) return cached;
  const result = parseFormula(source);
  if (parseCache.size >= PARSE_CACHE_LIMIT) parseCache.clear();
  parseCache.set(source, result);
  return result;
}
