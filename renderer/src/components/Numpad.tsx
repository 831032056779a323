import type { ReactElement } from 'react';

export type NumpadKey =
  '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | '.' | '-' | 'backspace' | 'clear';

interface NumpadProps {
  /** Names the keypad for assistive technology, e.g. "Keypad for PIN". */
  label: string;
  onKey: (key: NumpadKey) => void;
  decimal?: boolean;
  negative?: boolean;
}

const DIGITS: NumpadKey[] = ['1', '2', '3', '4', '5', '6', '7', '8', '9'];

/**
 * An on-screen keypad for touch screens. Its buttons do not take focus on press
 * (preventDefault on pointer down), so the field being typed into keeps it.
 */
export function Numpad({ label, onKey, decimal, negative }: NumpadProps): ReactElement {
  const key = (k: NumpadKey, text: string, name?: string): ReactElement => (
    <button
      key={k}
      type="button"
      className="numpad-key"
      aria-label={name}
      onPointerDown={(e) => e.preventDefault()}
      onClick={() => onKey(k)}
    >
      {text}
    </button>
  );
  return (
    <div className="numpad" role="group" aria-label={label}>
      {DIGITS.map((d) => key(d, d))}
      {negative ? key('-', '±', 'Change sign') : key('clear', 'C', 'Clear')}
      {key('0', '0')}
      {decimal ? key('.', '.', 'Decimal point') : key('backspace', '⌫', 'Delete last character')}
      {(negative || decimal) && (
        <>
          {negative && key('clear', 'C', 'Clear')}
          {decimal && key('backspace', '⌫', 'Delete last character')}
        </>
      )}
    </div>
  );
}

/** Applies a keypad key to a field's text. */
export function applyNumpadKey(value: string, key: NumpadKey): string {
  switch (key) {
    case 'backspace':
      return value.slice(0, -1);
    case 'clear':
      return '';
    case '-':
      return value.startsWith('-') ? value.slice(1) : `-${value}`;
    case '.':
      return value.includes('.')
        ? value
        : `${value === '' || value === '-' ? `${value}0` : value}.`;
    default:
      return value + key;
  }
}
