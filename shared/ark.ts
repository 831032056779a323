// ARK persistent identifiers (ark:NAAN/shoulder+blade+check) with the NOID check character.

export const BETANUMERIC = '0123456789bcdfghjkmnpqrstvwxz';
export const TEST_NAAN = '99999';
export const TEST_SHOULDER = 'fk4';
/**
 * The check character is a weighted sum mod 29 (a prime), so position weights 1..28 are all
 * invertible: that is what guarantees detection of single substitutions and adjacent
 * transpositions. Past 28 characters the weights repeat and errors can cancel out. Two gaps
 * remain even within the limit: "/" and "0" both weigh 0, so swapping them goes unseen, and at
 * exactly 28 characters so does swapping the last character with the check character itself.
 */
export const MAX_PROTECTED_LENGTH = 28;

const MAX_BLADE_LENGTH = 10;
const MIN_BLADE_LENGTH = 6;
const MAX_SHOULDER_LENGTH = 10;

const BETANUMERIC_RE = /^[0-9bcdfghjkmnpqrstvwxz]+$/;
// The ARK character repertoire for names; '?' and '#' are left out because they start
// inflections and fragments, which are not part of the identifier.
const NAME_RE = /^[A-Za-z0-9=~*+@_$./%-]+$/;

export interface ArkConfig {
  naan: string;
  shoulder: string;
}

export type ParsedArk =
  | { ok: true; ark: string; naan: string; name: string; checked: boolean }
  | { ok: false; message: string };

function betanumericValue(char: string): number {
  const index = BETANUMERIC.indexOf(char);
  return index < 0 ? 0 : index;
}

/** The NOID check character over `NAAN/shoulder+blade` (no `ark:` label, no leading slash). */
export function arkCheckChar(protectedString: string): string {
  let sum = 0;
  for (let i = 0; i < protectedString.length; i++) {
    sum += betanumericValue(protectedString.charAt(i)) * (i + 1);
  }
  return BETANUMERIC.charAt(sum % BETANUMERIC.length);
}

function prefixOf(config: ArkConfig): string {
  return `${config.naan}/${config.shoulder}`;
}

export function arkConfigProblems(config: ArkConfig): string[] {
  const problems: string[] = [];
  const naanOk = /^[0-9]{5,}$/.test(config.naan);
  const shoulderOk =
    config.shoulder.length <= MAX_SHOULDER_LENGTH && BETANUMERIC_RE.test(config.shoulder);
  if (!naanOk) problems.push('ark.naan: must be 5 or more digits');
  if (!shoulderOk) {
    problems.push(
      `ark.shoulder: must be 1 to ${MAX_SHOULDER_LENGTH} betanumeric characters (0-9 bcdfghjkmnpqrstvwxz)`,
    );
  }
  const prefixLength = prefixOf(config).length;
  if (naanOk && shoulderOk && prefixLength + MIN_BLADE_LENGTH > MAX_PROTECTED_LENGTH) {
    // The NAAN is at fault when no shoulder at all would fit beside it.
    const field =
      config.naan.length + 2 + MIN_BLADE_LENGTH > MAX_PROTECTED_LENGTH ? 'naan' : 'shoulder';
    problems.push(
      `ark.${field}: "${prefixOf(config)}" is ${prefixLength} characters; NAAN/shoulder may be ` +
        `at most ${MAX_PROTECTED_LENGTH - MIN_BLADE_LENGTH} so that a blade of at least ` +
        `${MIN_BLADE_LENGTH} fits within the ${MAX_PROTECTED_LENGTH} characters the check protects`,
    );
  }
  return problems;
}

export function bladeLength(config: ArkConfig): number {
  return Math.max(0, Math.min(MAX_BLADE_LENGTH, MAX_PROTECTED_LENGTH - prefixOf(config).length));
}

/** `randomIndex(below)` must return an integer in [0, below); pass a crypto-backed one. */
export function randomBlade(length: number, randomIndex: (below: number) => number): string {
  if (!Number.isInteger(length) || length < 0) {
    throw new RangeError(`blade length must be a non-negative integer, got ${length}`);
  }
  let blade = '';
  for (let i = 0; i < length; i++) {
    const index = randomIndex(BETANUMERIC.length);
    // A faulty source would silently skew or shorten identifiers, so refuse it outright.
    if (!Number.isInteger(index) || index < 0 || index >= BETANUMERIC.length) {
      throw new RangeError(`randomIndex(${BETANUMERIC.length}) returned ${index}`);
    }
    blade += BETANUMERIC.charAt(index);
  }
  return blade;
}

/**
 * Mints `ark:NAAN/shoulder+blade+check`. Throws on a config with problems, a blade that is not
 * betanumeric, or a result longer than the check protects: minting an identifier that cannot be
 * verified later is worse than failing now.
 */
export function makeArk(config: ArkConfig, blade: string): string {
  const problems = arkConfigProblems(config);
  if (problems.length > 0) throw new RangeError(problems.join('; '));
  if (!BETANUMERIC_RE.test(blade)) {
    throw new RangeError(`blade "${blade}" must be 1 or more betanumeric characters`);
  }
  const protectedString = prefixOf(config) + blade;
  if (protectedString.length > MAX_PROTECTED_LENGTH) {
    throw new RangeError(
      `"${protectedString}" is longer than the ${MAX_PROTECTED_LENGTH} characters the check protects`,
    );
  }
  return `ark:${protectedString}${arkCheckChar(protectedString)}`;
}

/**
 * A name as the identifier it stands for: hyphens taken out (the ARK scheme holds them
 * identity-inert, there for reading, as in `fk4-d7q2-x9m1r`), and a name that is betanumeric
 * but for its letter case (every name minted here, written in capitals) in lower case. Other
 * names keep their case, which ARKs in general distinguish.
 */
function arkName(written: string): string {
  const name = written.replace(/-/g, '');
  const lower = name.toLowerCase();
  return /^[0-9bcdfghjkmnpqrstvwxz/.]+$/.test(lower) ? lower : name;
}

/**
 * Text as an ARK: `ark:NAAN/name` or `ark:/NAAN/name` (the label in any case), answered in the
 * one form stored (`ark:NAAN/name`, the name as arkName gives it), with whether its last
 * character is the NOID check character of the rest.
 */
export function parseArk(text: string): ParsedArk {
  const trimmed = text.trim();
  const labelled = /^ark:\/?/i.exec(trimmed);
  if (labelled === null) return { ok: false, message: 'an ARK starts with "ark:"' };
  const rest = trimmed.slice(labelled[0].length);
  const slash = rest.indexOf('/');
  if (slash < 0) return { ok: false, message: 'an ARK has the form ark:NAAN/name' };
  const naan = rest.slice(0, slash);
  const name = arkName(rest.slice(slash + 1));
  if (!BETANUMERIC_RE.test(naan)) {
    return { ok: false, message: `the NAAN "${naan}" must be digits (or betanumeric characters)` };
  }
  if (name === '') return { ok: false, message: 'the name after the NAAN is empty' };
  if (!NAME_RE.test(name)) {
    return { ok: false, message: `the name "${name}" contains characters not allowed in an ARK` };
  }
  const body = name.slice(0, -1);
  const checked = body !== '' && name.slice(-1) === arkCheckChar(`${naan}/${body}`);
  return { ok: true, ark: `ark:${naan}/${name}`, naan, name, checked };
}

/**
 * The blade of an ARK that makeArk minted: its name without the shoulder and without the check
 * character. Minted blades are MAX_BLADE_LENGTH characters, except where NAAN/shoulder leaves
 * less room: then the blade fills the protected string to MAX_PROTECTED_LENGTH exactly. So a
 * shorter protected string ends in a full-length blade whatever the shoulder was (also for an
 * ARK minted before the station's shoulder changed). Only one of exactly that length needs its
 * `shoulder`, and gives null when it does not start with the one given. null too for text that
 * is not an ARK.
 */
export function arkBlade(ark: string, shoulder?: string): string | null {
  const parsed = parseArk(ark);
  if (!parsed.ok) return null;
  const { naan, name } = parsed;
  const protectedLength = naan.length + name.length; // NAAN, "/", name without its check
  if (protectedLength < MAX_PROTECTED_LENGTH) {
    return name.length > MAX_BLADE_LENGTH + 1 ? name.slice(-(MAX_BLADE_LENGTH + 1), -1) : null;
  }
  if (protectedLength > MAX_PROTECTED_LENGTH || shoulder === undefined || shoulder === '') {
    return null;
  }
  if (!name.startsWith(shoulder)) return null;
  const blade = name.slice(shoulder.length, -1);
  return blade.length >= MIN_BLADE_LENGTH && blade.length <= MAX_BLADE_LENGTH ? blade : null;
}

export function sameArk(a: string, b: string): boolean {
  const left = parseArk(a);
  const right = parseArk(b);
  return left.ok && right.ok && left.ark === right.ark;
}

export function isTestArk(arkOrConfig: string | ArkConfig): boolean {
  if (typeof arkOrConfig !== 'string') return arkOrConfig.naan.trim() === TEST_NAAN;
  const parsed = parseArk(arkOrConfig);
  return parsed.ok && parsed.naan === TEST_NAAN;
}

/**
 * Why an ARK that found no file may have been mistyped: its last character is not the NOID
 * check character of the rest, as for a label read with one character wrong or two swapped
 * (what the check character is there to catch). null for an ARK that checks, or text that is
 * no ARK.
 */
export function arkCheckProblem(text: string): string | null {
  const parsed = parseArk(text);
  if (!parsed.ok || parsed.checked) return null;
  return (
    'the ARK does not pass its check (its last character is not the check character of the ' +
    'rest): a character may be mistyped, or two swapped'
  );
}
