/**
 * The usage.* calls of the station's handler map (station.ts): a tool's usage history with its
 * date bounds, and the post-usage answers still pending for whoever is logged on.
 */
import type { Db } from '../../db/open.js';
import { AppError } from '../../util/errors.js';
import { completePending } from '../pendingForms.js';
import { findTool, findUser, queryUsage, toolInfo } from '../records.js';
import type { Ref, UserRow } from '../records.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type UsageContext = Pick<HandlerContext, 'db' | 'actor' | 'now' | 'pendingFor' | 'changed'>;

export function usageHandlers(ctx: UsageContext): HandlersOf<'usage'> {
  const { db } = ctx;
  return {
    'usage.history': ({ tool, user, from, to }) => {
      const actor = ctx.actor();
      const toolRow = findTool(db, tool);
      const userId = whoseUsage(db, actor, user);
      return {
        tool: toolInfo(toolRow),
        events: queryUsage(db, {
          toolId: toolRow.id,
          ...(userId === undefined ? {} : { userId }),
          ...(from === undefined ? {} : { from: boundary(from, 'from') }),
          ...(to === undefined ? {} : { to: boundary(to, 'to') }),
        }),
      };
    },
    'usage.pending': () => ({ pending: ctx.pendingFor(ctx.actor().id) }),
    'usage.completePending': (args) => {
      const usage = completePending(db, ctx.actor(), args, ctx.now());
      ctx.changed(usage.tool_name, usage.uuid);
      return { usage };
    },
  };
}

/**
 * Whose events a history read may hold: the answers are people's experiments, samples and notes
 * to staff, so as the server's usage.recent (staff) and usage.mine (anyone) staff see everyone's
 * or the person asked for, and anyone else only their own. For them a name nobody has is
 * refused as someone else's, so the answer says nothing of who exists.
 */
function whoseUsage(db: Db, actor: UserRow, user: Ref | undefined): number | undefined {
  if (actor.is_staff === 1) return user === undefined ? undefined : findUser(db, user).id;
  if (user === undefined) return actor.id;
  let asked: UserRow | undefined;
  try {
    asked = findUser(db, user);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'not_found') throw error;
  }
  if (asked?.id !== actor.id) {
    throw new AppError('forbidden', "only staff can see someone else's usage");
  }
  return actor.id;
}

/** As the contract's own refusal of an argument: the problem in details.problems too. */
function badBoundary(problem: string): AppError {
  return new AppError('bad_request', problem, { problems: [problem] });
}

/**
 * History bounds: a date alone means that whole day in the station's local time zone (from
 * its start, to its end); a date-time is taken as given. Everything is folded to UTC text so it
 * compares with the stored times.
 */
export function boundary(value: string, side: 'from' | 'to'): string {
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const day = new Date(y, m - 1, d);
    if (day.getFullYear() !== y || day.getMonth() !== m - 1 || day.getDate() !== d) {
      throw badBoundary(`${side}: ${value} is not a real date`);
    }
    if (side === 'to') day.setDate(d + 1);
    return day.toISOString();
  }
  const time = new Date(value);
  const [, y, m, d] = /^(\d{4})-(\d{2})-(\d{2})/.exec(value) ?? [];
  const real = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (
    Number.isNaN(time.getTime()) ||
    real.getUTCMonth() !== Number(m) - 1 ||
    real.getUTCDate() !== Number(d)
  ) {
    throw badBoundary(`${side}: ${value} is not a real date-time`);
  }
  return time.toISOString();
}
