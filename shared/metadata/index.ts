// Notebook entry metadata (spec 001): extra fields and their groups. Parse, validate and
// normalize; serialize; import/export with the notebook service (eLabFTW); entry operations;
// search rows and queries. Pure TypeScript: no Node, DOM or Electron.

export type {
  EditResult,
  FieldGroup,
  FieldProperty,
  FieldType,
  FieldValue,
  JsonEntry,
  JsonValue,
  LocatedProblem,
  MetadataDoc,
  MetadataField,
  MetadataProblem,
  MetadataProblemCode,
  NotebookSettings,
  ParseMetadataResult,
  ParseOptions,
  ProblemPath,
} from './types.js';
export {
  DEFAULT_FIELD_TYPE,
  FIELD_DEFAULTS,
  FIELD_PROPERTIES,
  FIELD_TYPES,
  NOTEBOOK_DEFAULTS,
  PROBLEM_CODES,
} from './types.js';

export { parseMetadata, parseMetadataText } from './parse.js';
export { listedUnit, validateMetadata } from './validate.js';
export type { ValidateOptions } from './validate.js';
export { formatPath, isAcceptable, structural } from './problems.js';
export { serializeMetadata, toElabftw, toNotebook } from './serialize.js';
export type { JsonRecord, MetadataForm } from './serialize.js';
export {
  compareFields,
  displayMainText,
  fieldsInDisplayOrder,
  findField,
  groupedFields,
} from './display.js';
export type { FieldSection } from './display.js';
export {
  addField,
  addGroup,
  createFromTemplate,
  duplicateMetadata,
  removeField,
  removeGroup,
  renameField,
  renameGroup,
  setFieldUnit,
  setFieldValue,
  updateField,
} from './operations.js';
export type { FieldDraft } from './operations.js';
export {
  emptyValueFor,
  isEmptyValue,
  isValidDate,
  isValidDateTime,
  isValidEmail,
  isValidTime,
  normalizeDateTime,
  numericValue,
  urlProblem,
} from './values.js';
export {
  dateQueryBounds,
  fieldKey,
  likeContainsPattern,
  matchesQuery,
  metadataIndexRows,
  metadataQuerySchema,
  RANGE_PROBLEMS,
  rowMatches,
  searchText,
  queryUnit,
  unitKey,
} from './search.js';
export type { MetadataIndexRow, MetadataQuery } from './search.js';
