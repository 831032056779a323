/**
 * How harvest configuration is checked, for a facility bundle (bundle.ts) and the server's
 * harvest API: each problem names its field and the rule. Apart from config.ts, which the
 * harvest itself loads: the hook config schemas here load zod.
 */
import { isAbsolute } from 'node:path';
import { Cron } from 'croner';
import { arkConfigProblems, type ArkConfig } from '../../../shared/ark.js';
import { patternProblems } from '../../../shared/harvest/glob.js';
import { hookConfigSchemas } from '../../../shared/harvest/hookConfig.js';
import { HOOK_KINDS, isHookKind, triggerOf } from '../../../shared/harvest/hookKinds.js';
import { parseTemplate } from '../../../shared/harvest/template.js';
import type { WatchFolder } from './config.js';

/**
 * An absolute path on a station, which may run Windows while the server does not:
 * `/data`, `D:\data`, `\\share\data`.
 */
export const STATION_ABSOLUTE = /^(\/|[A-Za-z]:[\\/]|\\\\[^\\])/;
export const NOT_STATION_ABSOLUTE =
  'must be an absolute path on the station (/data, D:\\data or \\\\share\\data)';

/**
 * Why `path` is not an absolute one, or null when it is. On a server (`onServer`) the path is
 * a station's, which may be a Windows one; on a station it must be absolute here.
 */
export function absolutePathProblem(path: string, onServer: boolean): string | null {
  if (onServer) return STATION_ABSOLUTE.test(path) ? null : NOT_STATION_ABSOLUTE;
  return isAbsolute(path) ? null : 'must be an absolute path';
}

/** Problems with one watched folder, each starting with `at` (`onServer`: absolutePathProblem). */
export function watchProblems(at: string, watch: WatchFolder, onServer = false): string[] {
  const problems: string[] = [];
  const notAbsolute = absolutePathProblem(watch.path, onServer);
  if (notAbsolute) problems.push(`${at}.path: ${notAbsolute}`);
  if (watch.path.includes('\0')) problems.push(`${at}.path: must not contain NUL`);
  for (const p of patternProblems({ include: watch.include, exclude: watch.exclude })) {
    problems.push(`${at}.${p.field}[${p.index}]: ${p.message}`);
  }
  return problems;
}

export function templateProblems(at: string, template: string): string[] {
  const parsed = parseTemplate(template);
  return parsed.ok ? [] : parsed.problems.map((p) => `${at}: ${p}`);
}

/** Problems with a schedule's cron: one that does not parse, or that never comes round. */
export function cronProblems(at: string, cron: string): string[] {
  let job: Cron;
  try {
    job = new Cron(cron, { paused: true });
  } catch (error) {
    return [`${at}: ${(error as Error).message}`];
  }
  try {
    return job.nextRun() === null ? [`${at}: ${JSON.stringify(cron)} never comes round`] : [];
  } finally {
    job.stop();
  }
}

/**
 * A cron as its times are compared: fields split on any run of spaces, and the optional seconds
 * field first given when left out ("0 2 * * *" is "0 0 2 * * *"), names in one case. Two
 * schedules of one instrument whose crons give the same key run at the same times.
 */
export function cronKey(cron: string): string {
  const fields = cron.trim().split(/\s+/);
  return (fields.length === 5 ? ['0', ...fields] : fields).join(' ').toUpperCase();
}

/**
 * Whether two time zone names are one zone: "etc/utc", "Etc/UTC" and "UTC" are, and so are
 * "US/Eastern" and "America/New_York" (by the runtime's ICU). Names are stored as written,
 * since runtimes differ on which alias they give back; schedules are compared by zone, so two
 * at the same times are found alike however each was written. No zone (null) is the
 * process's own, and only the same as no zone.
 */
export function sameZone(a: string | null | undefined, b: string | null | undefined): boolean {
  return zoneName(a) === zoneName(b);
}

/** The runtime's name of a zone (sameZone); null for none, a name that is no zone as it is. */
export function zoneName(timezone: string | null | undefined): string | null {
  if (!timezone) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return timezone;
  }
}

/**
 * A schedule's time zone. croner checks it only when it works out a run, so a bad one would
 * be found only when the station starts the schedule, and the schedule would never run.
 */
export function timezoneProblems(at: string, timezone: string | null | undefined): string[] {
  if (!timezone) return [];
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return [];
  } catch {
    return [
      `${at}: ${JSON.stringify(timezone)} is not an IANA time zone name (e.g. Europe/Zurich)`,
    ];
  }
}

/** Problems with a hook's kind, trigger and config, each starting with `at`. */
export function hookProblems(
  at: string,
  hook: { trigger: string; kind: string; config?: unknown },
): string[] {
  if (!isHookKind(hook.kind)) {
    return [
      `${at}.kind: ${JSON.stringify(hook.kind)} is not a hook kind; kinds are ` +
        `${HOOK_KINDS.join(', ')}`,
    ];
  }
  const problems: string[] = [];
  const trigger = triggerOf(hook.kind);
  if (hook.trigger !== trigger) {
    problems.push(`${at}.trigger: a ${hook.kind} hook runs ${trigger}, not ${hook.trigger}`);
  }
  const parsed = hookConfigSchemas[hook.kind].safeParse(hook.config ?? {});
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      // Named as the other fields are (watch[0].include[1]): the API's loc takes numbers so.
      const path = issue.path
        .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
        .join('');
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) problems.push(`${at}.config${path}.${key}: unknown field`);
        continue;
      }
      // A setting left out is named as missing, not as "expected string, received undefined".
      const given = issue.path.reduce<unknown>(
        (value, key) =>
          value !== null && typeof value === 'object' && Object.hasOwn(value, key)
            ? (value as Record<PropertyKey, unknown>)[key]
            : undefined,
        hook.config ?? {},
      );
      const missing = issue.code !== 'custom' && issue.path.length > 0 && given === undefined;
      problems.push(`${at}.config${path}: ${missing ? 'is required' : issue.message}`);
    }
    return problems;
  }
  const config = parsed.data as {
    glob?: string | string[];
    destination_template?: string;
    min_size?: number;
    max_size?: number;
  };
  // Checked here, not in the schema that runs hooks: a rule stored before this check never
  // matches, as it did, rather than failing every transfer of its instrument.
  if (
    config.min_size !== undefined &&
    config.max_size !== undefined &&
    config.min_size > config.max_size
  ) {
    problems.push(`${at}.config.min_size: must not be larger than max_size`);
  }
  const globs = config.glob === undefined ? [] : [config.glob].flat();
  // An empty list would be no rule at all (a skip hook with it skips nothing: it fails).
  if (config.glob !== undefined && globs.length === 0) {
    problems.push(`${at}.config.glob: must name at least one glob, or be left out`);
  }
  // As a watched folder's include is checked: a glob that cannot match would leave the files
  // it was meant for to the harvest (a skip hook for `previews/` keeps no preview out).
  for (const p of patternProblems({ include: globs, exclude: [] })) {
    problems.push(`${at}.config.glob[${p.index}]: ${p.message}`);
  }
  if (config.destination_template !== undefined) {
    problems.push(
      ...templateProblems(`${at}.config.destination_template`, config.destination_template),
    );
  }
  return problems;
}

export function arkProblems(at: string, ark: ArkConfig): string[] {
  return arkConfigProblems(ark).map((p) =>
    p.startsWith('ark.') ? `${at}${p.slice(3)}` : `${at}: ${p}`,
  );
}
