import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createXXHash128 } from 'hash-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK } from '../../../electron/core/harvest/copy.js';
import {
  copySmallFiles,
  READ_AHEAD,
  statFiles,
  type SmallCopyJob,
  type SmallCopyResult,
} from '../../../electron/core/harvest/copyBatch.js';

const root = mkdtempSync(join(tmpdir(), 'labstation-copybatch-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function xxh(data: Buffer): Promise<string> {
  const h = await createXXHash128();
  h.init();
  h.update(data);
  return h.digest('hex');
}

let n = 0;
/** A source file and the job that copies it into dest/, as the engine would send it. */
function job(content: Buffer, name = `f${n++}.dat`): SmallCopyJob {
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'dest'), { recursive: true });
  const source = join(root, 'src', name);
  writeFileSync(source, content);
  const s = statSync(source);
  return {
    source,
    partial: join(root, 'dest', `.${name}.x.partial`),
    destination: join(root, 'dest', name),
    size: s.size,
    mtimeMs: s.mtimeMs,
  };
}

/** This process's open descriptors, where Linux lists them. */
const openFds = (): number | null =>
  existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : null;

async function expectCopied(jobs: SmallCopyJob[], results: SmallCopyResult[]): Promise<void> {
  for (const [i, j] of jobs.entries()) {
    const r = results[i];
    if (r.outcome !== 'copied') {
      // Nothing is left behind for a file that was not copied.
      expect(existsSync(j.partial), j.source).toBe(false);
      continue;
    }
    const source = readFileSync(j.source);
    expect(readFileSync(j.partial).equals(source), j.source).toBe(true);
    expect(r.sourceHash).toBe(await xxh(source));
    expect(r.destHash).toBe(r.sourceHash);
    expect(r.bytes).toBe(source.length);
  }
}

describe.each([
  ['with sources read ahead', READ_AHEAD],
  ['with each source read in turn', 0],
])('copySmallFiles %s', (_, ahead) => {
  it('copies and verifies every file of a batch longer than its read-ahead, each with its own outcome', async () => {
    const fds = openFds();
    const contents = [
      randomBytes(100 * 1024),
      Buffer.alloc(0),
      randomBytes(CHUNK), // exactly the chunk read ahead
      randomBytes(3 * CHUNK + 17), // read on past the chunk read ahead
      randomBytes(1),
    ];
    const copied = contents.map((c) => job(c));
    const missing = job(randomBytes(10));
    rmSync(missing.source);
    const grown = job(randomBytes(1000));
    writeFileSync(grown.source, randomBytes(2000));
    const present = job(randomBytes(500));
    writeFileSync(present.destination, readFileSync(present.source));
    const more = [randomBytes(5000), randomBytes(CHUNK + 1)];
    const after = more.map((c) => job(c));

    const jobs = [...copied.slice(0, 2), missing, ...copied.slice(2), grown, present, ...after];
    const results = await copySmallFiles(jobs, ahead);

    expect(results.map((r) => r.outcome)).toEqual([
      'copied',
      'copied',
      'missing',
      'copied',
      'copied',
      'copied',
      'source_changed',
      'exists',
      'copied',
      'copied',
    ]);
    await expectCopied(jobs, results);
    // Every source and copy opened is closed again.
    expect(openFds()).toBe(fds);
  });

  it('keeps batches copied at the same time on one thread apart', async () => {
    const batches = [0, 1, 2].map(() =>
      Array.from({ length: 12 }, (_, i) => job(randomBytes(1000 + ((i * 7919) % CHUNK)))),
    );
    const results = await Promise.all(batches.map((b) => copySmallFiles(b, ahead)));
    for (const [k, b] of batches.entries()) {
      expect(results[k].every((r) => r.outcome === 'copied')).toBe(true);
      await expectCopied(b, results[k]);
    }
  });

  it('reports a source that cannot be opened as an error of its own, and goes on', async () => {
    const folder = job(randomBytes(10));
    rmSync(folder.source);
    mkdirSync(folder.source); // a folder where the file was: opens, then fails to read
    const fine = job(randomBytes(2048));
    const results = await copySmallFiles([folder, fine], ahead);
    expect(results[0]).toMatchObject({ outcome: 'error', code: 'EISDIR', removed: true });
    expect(existsSync(folder.partial)).toBe(false);
    expect(results[1].outcome).toBe('copied');
  });
});

describe('statFiles (the walk’s lstat in the service worker)', () => {
  it('gives size and mtime of regular files, null for what is gone or not a file', async () => {
    const file = job(randomBytes(321));
    const [s, gone, dir] = await statFiles([file.source, join(root, 'nope'), root]);
    expect(s).toEqual({ size: 321, mtimeMs: statSync(file.source).mtimeMs });
    expect(gone).toBeNull();
    expect(dir).toBeNull();
  });
});
