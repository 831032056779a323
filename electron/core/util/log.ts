import { pino, type Logger } from 'pino';

export type { Logger };

/** The one logger of the core; tests and the CLI may pass a silent one. */
export function createLogger(level: string = process.env.LABSTATION_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: undefined }, pino.destination(2));
}
