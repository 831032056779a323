/** The commands that run until stopped: a headless station (`station`) and the server (`serve`). */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { HELP } from './help.js';
import { createLogger } from '../core/util/log.js';
import { need, portOf, UsageError } from './args.js';
import { firstFill, undoUnlessBusy } from './firstFill.js';

export async function station(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      port: { type: 'string' },
      demo: { type: 'boolean' },
      server: { type: 'string' },
      key: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return (process.stdout.write(HELP), 0);
  const port = portOf(values.port, 0);
  const { runStation } = await import('../core/runStation.js');
  const dataDir = need(values.data, '--data');
  if (values.server !== undefined) {
    // A bad address is wrong usage, named by its flag, and refused before the data dir is made.
    const { serverAddress } = await import('../core/sync/link.js');
    try {
      serverAddress(values.server);
    } catch (error) {
      throw new UsageError(`--server ${(error as Error).message.replace(/^server: /, '')}`);
    }
  }
  // Given together or not at all; refused before the data dir is made.
  const link =
    values.server !== undefined || values.key !== undefined
      ? { server: need(values.server, '--server'), key: need(values.key, '--key') }
      : {};
  const fill = firstFill(resolve(dataDir));
  const running = await runStation({
    dataDir,
    port,
    demo: values.demo ?? false,
    log: createLogger(),
    ...link,
  }).catch(undoUnlessBusy(fill));
  fill.done();
  const stopAsked = untilStopAsked();
  process.stdout.write(`Labstation station ready at ${running.url}#token=${running.token}\n`);
  await stopAsked;
  await running.close();
  return 0;
}

/**
 * Resolves at the first SIGINT or SIGTERM, which then closes the process cleanly (a second
 * SIGINT while it closes ends it). Called before the ready line is written: whoever reads that
 * line may signal at once, and a signal that came between the line and the listeners took the
 * process down (as a `npm start` under load showed).
 */
function untilStopAsked(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export async function serve(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'time-zone': { type: 'string' },
    },
  });
  const port = portOf(values.port, 8080);
  const { runServer, checkTimeZone } = await import('../core/runServer.js');
  const dataDir = need(values.data, '--data');
  // A bad zone is named by where it came from: a flag's is wrong usage, as a bad --port.
  let timeZone: string | undefined;
  if (values['time-zone'] !== undefined) {
    try {
      timeZone = checkTimeZone(values['time-zone'], '--time-zone');
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  } else if (process.env.LABSTATION_TIME_ZONE !== undefined) {
    timeZone = checkTimeZone(process.env.LABSTATION_TIME_ZONE, 'LABSTATION_TIME_ZONE');
  }
  const fill = firstFill(resolve(dataDir));
  const running = await runServer({
    dataDir,
    host: values.host ?? '127.0.0.1',
    port,
    log: createLogger(),
    timeZone,
  }).catch(undoUnlessBusy(fill));
  fill.done();
  const stopAsked = untilStopAsked();
  process.stdout.write(`Labstation server ready at ${running.url}\n`);
  await stopAsked;
  await running.close();
  return 0;
}
