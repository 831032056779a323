/**
 * The toolControl.* calls of the station's handler map (station.ts): enabling, disabling,
 * force-ending and validating a usage, and bringing a shut-down tool back (../toolControl.ts).
 */
import type { UsageEventView } from '../../../../shared/api.js';
import { AppError } from '../../util/errors.js';
import { activeUsageOf, findTool } from '../records.js';
import {
  clearShutdown,
  disableTool,
  enableTool,
  forceEndTool,
  toolStatus,
  validateUsage,
} from '../toolControl.js';
import type { HandlerContext, HandlersOf } from './context.js';

export type ToolControlContext = Pick<
  HandlerContext,
  'db' | 'actor' | 'now' | 'stationTool' | 'emit' | 'changed'
>;

/**
 * A station controls its own tool only: a usage it recorded for another would be refused by
 * its server (which takes a station's records for the tool it was registered for) and, until
 * then, held there. Reading another tool's state stays open.
 */
function requireOwnTool(ctx: ToolControlContext, tool: string | number, doing: string): void {
  const own = ctx.stationTool();
  if (own === null) return;
  const name = findTool(ctx.db, tool).name;
  if (name !== own) {
    throw new AppError(
      'forbidden',
      `tool: this station runs ${JSON.stringify(own)}; ${doing} ${JSON.stringify(name)} at its own station`,
    );
  }
}

export function toolControlHandlers(ctx: ToolControlContext): HandlersOf<'toolControl'> {
  const { db } = ctx;
  return {
    'toolControl.status': ({ tool }) => toolStatus(db, tool),
    'toolControl.enable': (args) => {
      requireOwnTool(ctx, args.tool, 'enable');
      let usage: UsageEventView;
      try {
        usage = enableTool(db, ctx.actor(), args, ctx.now());
      } catch (error) {
        // A problem report in the pre-usage answers may have shut the tool down.
        if (error instanceof AppError && error.code === 'tool_shutdown') {
          ctx.emit({ type: 'tool.changed', tool: findTool(db, args.tool).name });
        }
        throw error;
      }
      ctx.changed(usage.tool_name, usage.uuid);
      return { usage };
    },
    'toolControl.disable': (args) => {
      const usage = disableTool(db, ctx.actor(), args, ctx.now());
      ctx.changed(usage.tool_name, usage.uuid);
      return { usage };
    },
    'toolControl.forceEnd': ({ tool }) => {
      // A usage this station recorded on a tool it ran before can still be ended here (its
      // server takes a station's records for its former tools, and no other station may).
      if (!activeUsageOf(db, findTool(db, tool).id)) requireOwnTool(ctx, tool, 'force-end');
      const usage = forceEndTool(db, ctx.actor(), tool, ctx.now());
      ctx.changed(usage.tool_name, usage.uuid);
      return { usage };
    },
    'toolControl.validate': ({ usage: ref }) => {
      const usage = validateUsage(db, ctx.actor(), ref, ctx.now());
      ctx.changed(usage.tool_name, usage.uuid);
      return { usage };
    },
    'toolControl.clearShutdown': ({ tool }) => {
      requireOwnTool(ctx, tool, 'bring back');
      const status = clearShutdown(db, ctx.actor(), tool, ctx.now());
      ctx.changed(status.tool.name);
      return status;
    },
  };
}
