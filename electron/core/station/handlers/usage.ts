/**
 * The usage.* calls of the station's handler map (station.ts): a tool's usage history with its
 * date bounds, and the post-usage answers still pending for whoever is logged on.
 */
import { AppError } from '../../util/errors.js';
import { completePending } from '../pendingForms.js';
import { findTool, findUser, queryUsage, toolInfo } from '../records.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type UsageContext = Pick<HandlerContext, 'db' | 'actor' | 'now' | 'pendingFor' | 'changed'>;

export function usageHandlers(ctx: UsageContext): HandlersOf<'usage'> {
  const { db } = ctx;
  return {
    'usage.history': ({ tool, user, from, to }) => {
      ctx.actor();
      const toolRow = findTool(db, tool);
      return {
        tool: toolInfo(toolRow),
        events: queryUsage(db, {
          toolId: toolRow.id,
          ...(user === undefined ? {} : { userId: findUser(db, user).id }),
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
