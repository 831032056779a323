/**
 * The field builder's form as the draft it adds: options and units are typed one per line, as
 * the dialog's labels say.
 */
import { describe, expect, it } from 'vitest';
import {
  EMPTY_BUILDER_FORM,
  draftFromForm,
} from '../../../renderer/src/features/notebook/builderRules.js';

describe('draftFromForm', () => {
  it('keeps a comma inside an option or a unit (one per line)', () => {
    const select = draftFromForm({
      ...EMPTY_BUILDER_FORM,
      name: 'Solvent',
      type: 'select',
      options: 'N,N-Dimethylformamide\n  Water \r\n\nYes, degassed',
      value: 'N,N-Dimethylformamide',
    });
    expect(select.options).toEqual(['N,N-Dimethylformamide', 'Water', 'Yes, degassed']);
    expect(select.value).toBe('N,N-Dimethylformamide');
    const number = draftFromForm({
      ...EMPTY_BUILDER_FORM,
      name: 'Dose',
      type: 'number',
      units: 'e/Å²\nkg m/s²,net',
      unit: 'kg m/s²,net',
    });
    expect(number.units).toEqual(['e/Å²', 'kg m/s²,net']);
    expect(number.unit).toBe('kg m/s²,net');
  });
});
