/**
 * A new entry's metadata given over its template's (notebook/entries.ts createEntry): the
 * template's fields and settings all kept, the given ones laid over them, as JSON objects. The
 * result is checked as a whole by the caller (store.ts prepareMetadata).
 */
import { isPlainObject, ownValue, setOwn, type JsonObject } from '../../../shared/metadata/json.js';
import { fieldKey } from '../../../shared/metadata/search.js';

/** Own entries of `a`, then those of `b` over them (b wins); `__proto__` is a plain key. */
function mergeObjects(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(a)) setOwn(out, key, value);
  for (const [key, value] of Object.entries(b)) setOwn(out, key, value);
  return out;
}

/**
 * A group's id as the reader takes it (a whole number, also written as text such as "2"), where
 * it is a group object with one; other values stand for themselves.
 */
function groupId(group: unknown): unknown {
  const id = isPlainObject(group) ? ownValue(group, 'id') : undefined;
  return typeof id === 'string' && /^-?\d{1,15}$/.test(id.trim()) ? Number(id.trim()) : id;
}

/**
 * The template's field groups with the given ones laid over them: a given group of the same id
 * in its place, merged over it, the others after. A given id listed twice is kept twice, for the check to
 * refuse. Null when either is not a list (nothing to merge: the given value stands, and the
 * check names what is wrong with it).
 */
function mergeGroups(base: unknown, given: unknown): unknown[] | null {
  if (!Array.isArray(base) || !Array.isArray(given)) return null;
  const theirs: unknown[] = base;
  const mine: unknown[] = given;
  const baseIds = new Set(theirs.map(groupId));
  const over = new Map<unknown, unknown>();
  const after: unknown[] = [];
  for (const group of mine) {
    const id = groupId(group);
    if (id !== undefined && baseIds.has(id) && !over.has(id)) over.set(id, group);
    else after.push(group);
  }
  // A given group of the same id is laid over the template's, as a given field is over its
  // field: what it leaves out (a color, another key of the service's) stays.
  return [
    ...theirs.map((group) => {
      const mine = over.get(groupId(group));
      if (mine === undefined) return group;
      return isPlainObject(group) && isPlainObject(mine) ? mergeObjects(group, mine) : mine;
    }),
    ...after,
  ];
}

/**
 * The given metadata with its notebook settings under "notebook", where the template's are
 * (toNotebook): the reader takes them from "elabftw" when "notebook" is absent or null
 * (readMetadata), so settings given there are merged as if given under "notebook". A null
 * "notebook" is none, as everywhere: the template's settings stay, as they do for a null or []
 * "elabftw". An "elabftw" that is not an object is left under its own name, for the check to
 * name it.
 */
function givenSettingsAsNotebook(given: JsonObject): JsonObject {
  const notebook = ownValue(given, 'notebook');
  const elabftw = ownValue(given, 'elabftw');
  // null and [] under "elabftw" are no settings, as under "notebook" (noneAsEmpty).
  const takeElabftw = isPlainObject(noneAsEmpty(elabftw));
  if (notebook !== null && (notebook !== undefined || !takeElabftw)) return given;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(given)) {
    if (key === 'notebook') continue;
    setOwn(out, takeElabftw && key === 'elabftw' ? 'notebook' : key, value);
  }
  return out;
}

/** null and [] as an empty object, as the reader takes extra_fields and notebook written so. */
function noneAsEmpty(value: unknown): unknown {
  return value === null || (Array.isArray(value) && value.length === 0) ? {} : value;
}

/**
 * A template's metadata (as JSON) with the metadata given for the new entry laid over it, so
 * the template's fields are all there (spec 001, rule 3): a given field of the same name fills
 * in the template's (its properties over the template's: a value keeps the field's type,
 * options, unit and group), given fields the template lacks are added after its own, and the
 * given notebook settings are merged over the template's: its groups too, by id (mergeGroups),
 * since the template's fields name the template's groups. Checked as a whole afterwards.
 */
export function overlayJson(base: JsonObject, given: JsonObject): JsonObject {
  const out = mergeObjects(base, {});
  for (const [key, written] of Object.entries(givenSettingsAsNotebook(given))) {
    const was = ownValue(out, key);
    // Read as the reader reads them: none (null) and [] (PHP's empty object) are no fields
    // and no settings given, which leave the template's, not take them away.
    const value = key === 'extra_fields' || key === 'notebook' ? noneAsEmpty(written) : written;
    if (key === 'extra_fields' && isPlainObject(was) && isPlainObject(value)) {
      const fields: JsonObject = {};
      // A given field fills in the template's field of the same name, also where one of them
      // is written in another Unicode form (search takes them for one field: fieldKey), rather
      // than being added beside it under a name that looks the same.
      const givenByKey = new Map<string, string>();
      for (const name of Object.keys(value)) {
        if (!givenByKey.has(fieldKey(name))) givenByKey.set(fieldKey(name), name);
      }
      const filledIn = new Set<string>();
      for (const [name, field] of Object.entries(was)) {
        const givenName =
          ownValue(value, name) !== undefined ? name : givenByKey.get(fieldKey(name));
        const over = givenName === undefined ? undefined : ownValue(value, givenName);
        if (over !== undefined) filledIn.add(givenName as string);
        setOwn(
          fields,
          name,
          over === undefined
            ? field
            : isPlainObject(field) && isPlainObject(over)
              ? mergeObjects(field, over)
              : over,
        );
      }
      for (const [name, field] of Object.entries(value)) {
        if (!filledIn.has(name) && ownValue(was, name) === undefined) setOwn(fields, name, field);
      }
      setOwn(out, key, fields);
    } else if (key === 'notebook' && isPlainObject(was) && isPlainObject(value)) {
      const notebook = mergeObjects(was, value);
      const givenGroups = ownValue(value, 'extra_fields_groups');
      const groups = mergeGroups(
        ownValue(was, 'extra_fields_groups'),
        givenGroups === null ? [] : givenGroups,
      );
      if (groups) setOwn(notebook, 'extra_fields_groups', groups);
      setOwn(out, key, notebook);
    } else {
      setOwn(out, key, value);
    }
  }
  return out;
}
