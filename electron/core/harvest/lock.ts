/**
 * One harvester per data dir. Two (a running station and a cron `labstation harvest --once`)
 * would each take the other's partial copies for leftovers of a crash and transfer the same
 * files twice. The lock is a file holding the owner's pid, created exclusively; a lock whose
 * process is gone is stale and taken over.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { AppError } from '../util/errors.js';
import { isRunning } from '../util/pid.js';

export interface HarvestLock {
  release(): void;
}

export function takeHarvestLock(file: string): HarvestLock {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return {
        release() {
          try {
            if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
          } catch {
            // Already gone.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(file, 'utf8').trim());
    } catch {
      continue;
    }
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) {
      throw new AppError(
        'conflict',
        `another harvest runs on this data dir (process ${owner}); stop it first ` +
          '(a running station harvests by itself)',
      );
    }
    try {
      unlinkSync(file);
    } catch {
      // Someone else took it over first; try again.
    }
  }
  throw new AppError('conflict', `cannot take the harvest lock ${file}`);
}
