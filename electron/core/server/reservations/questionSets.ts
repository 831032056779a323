/**
 * Reservation question sets (spec 000, table reservation_questions): which sets apply to a
 * booking of a tool or an area for a project, and their questions merged into one form.
 *
 * Several sets can apply at once; their answers share one question_data object keyed by
 * question name, so two sets that can apply together may not use the same name. Saving checks
 * that pairwise on the sets' rules (not on today's tools and projects), so a tool or project
 * added later cannot make two saved sets collide: two enabled sets can apply together when both
 * take tool reservations with tool lists that meet (an empty list meets every list), or both
 * take area reservations with area lists that meet, and their project lists meet.
 */
import type {
  ReservationForm,
  ReservationQuestionSet,
  ReservationQuestionSetInput,
} from '../../../../shared/reservationApi.js';
import {
  parseQuestions,
  serializeQuestions,
  type Question,
} from '../../../../shared/questions/index.js';
import type { Db } from '../../db/open.js';
import { AppError, fieldError } from '../../util/errors.js';
import { changedElsewhere } from '../admin/facilitySaves.js';
import { newUuid } from '../../util/ids.js';

/** What a form is for: a tool or an area, booked for a project. */
export type FormTarget = { tool: number; area?: undefined } | { area: number; tool?: undefined };

interface SetRow {
  id: number;
  uuid: string;
  enabled: number;
  name: string;
  questions: string;
  tool_reservations: number;
  area_reservations: number;
  created_at: string;
  updated_at: string;
}

/** The rules of a set that decide where it applies. */
interface SetRules {
  id: number;
  name: string;
  enabled: boolean;
  tool_reservations: boolean;
  area_reservations: boolean;
  tools: number[];
  areas: number[];
  projects: number[];
}

function linksOf(db: Db, table: string, column: string, setId: number): number[] {
  return db
    .prepare(`SELECT ${column} FROM ${table} WHERE set_id = ? ORDER BY ${column}`)
    .pluck()
    .all(setId) as number[];
}

function toSet(db: Db, row: SetRow): ReservationQuestionSet {
  return {
    id: row.id,
    uuid: row.uuid,
    enabled: row.enabled === 1,
    name: row.name,
    questions: JSON.parse(row.questions) as unknown[],
    tool_reservations: row.tool_reservations === 1,
    only_for_tools: linksOf(db, 'reservation_question_set_tools', 'tool_id', row.id),
    area_reservations: row.area_reservations === 1,
    only_for_areas: linksOf(db, 'reservation_question_set_areas', 'area_id', row.id),
    only_for_projects: linksOf(db, 'reservation_question_set_projects', 'project_id', row.id),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function listQuestionSets(db: Db): { sets: ReservationQuestionSet[] } {
  const rows = db.prepare('SELECT * FROM reservation_question_sets ORDER BY id').all() as SetRow[];
  return { sets: rows.map((row) => toSet(db, row)) };
}

function setById(db: Db, id: number): ReservationQuestionSet {
  const row = db.prepare('SELECT * FROM reservation_question_sets WHERE id = ?').get(id) as
    SetRow | undefined;
  if (!row) throw fieldError('id', `no reservation question set with id ${id}`, 'not_found');
  return toSet(db, row);
}

/** Every name a question list uses, nested ones too (names are unique across groups). */
function namesOf(questions: readonly Question[]): string[] {
  return questions.flatMap((q) => [q.name, ...(q.type === 'group' ? namesOf(q.questions) : [])]);
}

function storedQuestions(row: { name: string; questions: string }): Question[] {
  const parsed = parseQuestions(JSON.parse(row.questions), { stored: true });
  if (!parsed.ok) {
    // Saved sets were checked by the same parser; this is a damaged row, not a user's mistake.
    throw new AppError('internal', `reservation question set ${row.name} cannot be read`);
  }
  return parsed.questions;
}

const listsMeet = (a: number[], b: number[]): boolean =>
  a.length === 0 || b.length === 0 || a.some((x) => b.includes(x));

/** In words, where two sets both apply; null when they never do. */
function sharedScope(a: SetRules, b: SetRules): string | null {
  if (!a.enabled || !b.enabled || !listsMeet(a.projects, b.projects)) return null;
  if (a.tool_reservations && b.tool_reservations && listsMeet(a.tools, b.tools)) {
    return 'tool reservations';
  }
  if (a.area_reservations && b.area_reservations && listsMeet(a.areas, b.areas)) {
    return 'area reservations';
  }
  return null;
}

function checkIds(db: Db, table: 'tools' | 'areas' | 'projects', ids: number[], field: string) {
  const missing = [...new Set(ids)].filter(
    (id) => db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).get(id) === undefined,
  );
  if (missing.length) {
    throw fieldError(field, `no ${table.slice(0, -1)} with id ${missing.join(', ')}`);
  }
}

/** The question list checked by the shared parser; each problem names its question and rule. */
function checkedQuestions(value: unknown): Question[] {
  const parsed = parseQuestions(value ?? []);
  if (!parsed.ok) {
    const problems = parsed.problems.map((p) => ({
      path: p.path ? ['questions', p.path] : ['questions'],
      message: p.message,
    }));
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    throw new AppError('validation_failed', `questions: ${problems[0]?.message}${more}`, {
      problems,
    });
  }
  return parsed.questions;
}

export function saveQuestionSet(
  db: Db,
  input: ReservationQuestionSetInput,
  now: string,
): { set: ReservationQuestionSet } {
  const id = input.id ?? null;
  const questions = checkedQuestions(input.questions);
  const savedId = db
    .transaction((): number => {
      if (id !== null) {
        const stored = setById(db, id);
        if (input.updated_at !== undefined && stored.updated_at !== input.updated_at) {
          throw changedElsewhere(stored.name, stored.updated_at);
        }
      }
      const taken = db
        .prepare('SELECT 1 FROM reservation_question_sets WHERE name = ? AND id <> ?')
        .get(input.name, id ?? -1);
      if (taken) {
        throw fieldError(
          'name',
          `a reservation question set named ${input.name} exists`,
          'conflict',
        );
      }
      checkIds(db, 'tools', input.only_for_tools, 'only_for_tools');
      checkIds(db, 'areas', input.only_for_areas, 'only_for_areas');
      checkIds(db, 'projects', input.only_for_projects, 'only_for_projects');
      checkNoSharedNames(db, id, input, questions);
      const values = {
        enabled: input.enabled ? 1 : 0,
        name: input.name,
        questions: JSON.stringify(serializeQuestions(questions)),
        tool_reservations: input.tool_reservations ? 1 : 0,
        area_reservations: input.area_reservations ? 1 : 0,
        now,
      };
      let setId: number;
      if (id === null) {
        setId = Number(
          db
            .prepare(
              `INSERT INTO reservation_question_sets (uuid, enabled, name, questions,
                 tool_reservations, area_reservations, created_at, updated_at)
               VALUES (@uuid, @enabled, @name, @questions, @tool_reservations,
                 @area_reservations, @now, @now)`,
            )
            .run({ ...values, uuid: newUuid() }).lastInsertRowid,
        );
      } else {
        setId = id;
        db.prepare(
          `UPDATE reservation_question_sets SET enabled = @enabled, name = @name,
             questions = @questions, tool_reservations = @tool_reservations,
             area_reservations = @area_reservations, updated_at = @now
           WHERE id = @id`,
        ).run({ ...values, id });
      }
      replaceLinks(db, 'reservation_question_set_tools', 'tool_id', setId, input.only_for_tools);
      replaceLinks(db, 'reservation_question_set_areas', 'area_id', setId, input.only_for_areas);
      replaceLinks(
        db,
        'reservation_question_set_projects',
        'project_id',
        setId,
        input.only_for_projects,
      );
      return setId;
    })
    .immediate();
  return { set: setById(db, savedId) };
}

function replaceLinks(db: Db, table: string, column: string, setId: number, ids: number[]): void {
  db.prepare(`DELETE FROM ${table} WHERE set_id = ?`).run(setId);
  const insert = db.prepare(`INSERT INTO ${table} (set_id, ${column}) VALUES (?, ?)`);
  for (const other of new Set(ids)) insert.run(setId, other);
}

/** Refuses a name that another set able to apply together with this one uses too. */
function checkNoSharedNames(
  db: Db,
  id: number | null,
  input: ReservationQuestionSetInput,
  questions: Question[],
): void {
  const mine: SetRules = {
    id: id ?? 0,
    name: input.name,
    enabled: input.enabled,
    tool_reservations: input.tool_reservations,
    area_reservations: input.area_reservations,
    tools: input.only_for_tools,
    areas: input.only_for_areas,
    projects: input.only_for_projects,
  };
  if (!mine.enabled) return;
  const names = new Set(namesOf(questions));
  const others = db
    .prepare('SELECT * FROM reservation_question_sets WHERE enabled = 1 AND id <> ? ORDER BY id')
    .all(id ?? -1) as SetRow[];
  for (const row of others) {
    const other = toSet(db, row);
    const scope = sharedScope(mine, {
      id: other.id,
      name: other.name,
      enabled: other.enabled,
      tool_reservations: other.tool_reservations,
      area_reservations: other.area_reservations,
      tools: other.only_for_tools,
      areas: other.only_for_areas,
      projects: other.only_for_projects,
    });
    if (scope === null) continue;
    const shared = namesOf(storedQuestions(row)).find((name) => names.has(name));
    if (shared === undefined) continue;
    const message =
      `the question name "${shared}" is used by both "${input.name}" and "${other.name}", ` +
      `which can apply to the same ${scope.replace('reservations', 'reservation')}; ` +
      'rename the question in one of them, or narrow the sets so they never apply together';
    throw new AppError('conflict', `questions: ${message}`, {
      problems: [{ path: ['questions'], message }],
      question: shared,
      sets: [input.name, other.name],
    });
  }
}

export function deleteQuestionSet(db: Db, id: number): { ok: true } {
  const changes = db.prepare('DELETE FROM reservation_question_sets WHERE id = ?').run(id).changes;
  if (changes === 0)
    throw fieldError('id', `no reservation question set with id ${id}`, 'not_found');
  return { ok: true };
}

/** The enabled sets that apply to a booking of `target` for `project`, in id order. */
export function applicableSets(
  db: Db,
  target: FormTarget,
  project: number,
): { id: number; name: string; questions: string }[] {
  const projectRule = `NOT EXISTS (SELECT 1 FROM reservation_question_set_projects p
      WHERE p.set_id = s.id) OR EXISTS (SELECT 1 FROM reservation_question_set_projects p
      WHERE p.set_id = s.id AND p.project_id = @project)`;
  const sql =
    target.tool !== undefined
      ? `SELECT s.id, s.name, s.questions FROM reservation_question_sets s
         WHERE s.enabled = 1 AND s.tool_reservations = 1
           AND (NOT EXISTS (SELECT 1 FROM reservation_question_set_tools t WHERE t.set_id = s.id)
             OR EXISTS (SELECT 1 FROM reservation_question_set_tools t
               WHERE t.set_id = s.id AND t.tool_id = @target))
           AND (${projectRule})
         ORDER BY s.id`
      : `SELECT s.id, s.name, s.questions FROM reservation_question_sets s
         WHERE s.enabled = 1 AND s.area_reservations = 1
           AND (NOT EXISTS (SELECT 1 FROM reservation_question_set_areas a WHERE a.set_id = s.id)
             OR EXISTS (SELECT 1 FROM reservation_question_set_areas a
               WHERE a.set_id = s.id AND a.area_id = @target))
           AND (${projectRule})
         ORDER BY s.id`;
  return db.prepare(sql).all({ target: target.tool ?? target.area, project }) as {
    id: number;
    name: string;
    questions: string;
  }[];
}

/**
 * The form of a booking: the questions of every applicable set, set after set. The tool or
 * area and the project must exist (a form for nothing is a mistake, not an empty form).
 */
export function mergedQuestions(db: Db, target: FormTarget, project: number): ReservationForm {
  if (target.tool !== undefined) {
    if (!db.prepare('SELECT 1 FROM tools WHERE id = ?').get(target.tool)) {
      throw fieldError('tool', `no tool with id ${target.tool}`, 'not_found');
    }
  } else if (!db.prepare('SELECT 1 FROM areas WHERE id = ?').get(target.area)) {
    throw fieldError('area', `no area with id ${target.area}`, 'not_found');
  }
  if (!db.prepare('SELECT 1 FROM projects WHERE id = ?').get(project)) {
    throw fieldError('project', `no project with id ${project}`, 'not_found');
  }
  const sets = applicableSets(db, target, project);
  const questions: Question[] = [];
  const owner = new Map<string, string>();
  for (const set of sets) {
    const list = storedQuestions(set);
    for (const name of namesOf(list)) {
      const first = owner.get(name);
      // Saving refuses this; a set saved before that check (or edited in the database) lands here.
      if (first !== undefined) {
        throw new AppError(
          'conflict',
          `the reservation question sets "${first}" and "${set.name}" both ask "${name}"; an admin must rename one`,
        );
      }
      owner.set(name, set.name);
    }
    questions.push(...list);
  }
  return { sets: sets.map((s) => ({ id: s.id, name: s.name })), questions };
}
