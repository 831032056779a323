/**
 * The limit on what a command hook may print (commandHook.ts COMMAND_OUTPUT_MAX, 4 MiB) counts the
 * bytes it wrote, with real processes: output of multi-byte UTF-8 letters just under the limit
 * is taken, and just over it ends the hook, though it holds fewer than 4 Mi characters.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Hook } from '../../electron/core/harvest/config.js';
import { acceptHooks, endRunningHooks } from '../../electron/core/harvest/commandHook.js';
import { runPostTransferHooks } from '../../electron/core/harvest/hooks.js';
import { tempDir } from './helpers.js';
import { copiedFile, nodeHook } from './hookFixtures.js';

const LIMIT = 4 * 1024 * 1024;

/**
 * A hook that prints {"text":"ééé…"} of `bytes` bytes in all: "é" is 2 bytes in UTF-8, so the
 * output is about half as many characters as bytes. Written in 64 KiB writes, so letters are
 * split across the pipe's chunks too.
 */
function printing(bytes: number): Hook {
  const script = `
    const total = Number(process.argv[1]);
    const head = '{"text":"', tail = '"}';
    const inner = total - head.length - tail.length;
    const body = 'é'.repeat(Math.floor(inner / 2)) + (inner % 2 ? 'x' : '');
    const out = Buffer.from(head + body + tail, 'utf8');
    if (out.length !== total) throw new Error('size ' + out.length);
    let at = 0;
    const next = () => {
      while (at < out.length) {
        const part = out.subarray(at, at + 65537);
        at += part.length;
        if (!process.stdout.write(part)) return process.stdout.once('drain', next);
      }
    };
    next();`;
  return nodeHook('printer', ['-e', script, String(bytes)]);
}

afterEach(() => {
  endRunningHooks('test over');
  acceptHooks();
});

describe('command hook output limit', () => {
  it('takes multi-byte output of exactly 4 MiB', async () => {
    const metadata = await runPostTransferHooks(
      [printing(LIMIT)],
      copiedFile(tempDir('labstation-hook-output-'), 1),
    );
    expect(metadata.hook_errors).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(metadata), 'utf8')).toBe(LIMIT);
    expect((metadata.text as string).slice(0, 2)).toBe('éé');
  }, 30_000);

  it('ends a hook that prints one byte more than 4 MiB, in fewer than 4 Mi characters', async () => {
    const metadata = await runPostTransferHooks(
      [printing(LIMIT + 1)],
      copiedFile(tempDir('labstation-hook-output-'), 1),
    );
    expect('text' in metadata).toBe(false);
    expect(metadata.hook_errors).toEqual([
      { hook: 'printer', kind: 'command', error: 'printed more than 4 MiB' },
    ]);
  }, 30_000);
});

describe("a file's metadata as a whole", () => {
  it('leaves out a hook whose output would take it past 6 MiB, naming it; the hooks before and after stand', async () => {
    // Each prints {"<key>":"xxx…"} of about 2.5 MiB, under its own limit of 4 MiB.
    const big = (name: string, key: string): Hook =>
      nodeHook(name, [
        '-e',
        `process.stdout.write(JSON.stringify({ ${key}: 'x'.repeat(2.5 * 1024 * 1024) }))`,
      ]);
    const small = nodeHook('small', ['-e', 'process.stdout.write(JSON.stringify({ small: 1 }))']);
    const metadata = await runPostTransferHooks(
      [big('one', 'one'), big('two', 'two'), big('three', 'three'), small],
      copiedFile(tempDir('labstation-hook-output-'), 1),
    );
    expect(Object.keys(metadata)).toEqual(['one', 'two', 'small', 'hook_errors']);
    expect(metadata.hook_errors).toEqual([
      {
        hook: 'three',
        kind: 'command',
        error: expect.stringMatching(
          /^left out: its output would make the file's metadata 7,864,\d{3} bytes, over the 6,291,456 \(6 MiB\) a record may hold$/,
        ) as unknown,
      },
    ]);
    expect(Buffer.byteLength(JSON.stringify(metadata), 'utf8')).toBeLessThanOrEqual(
      6 * 1024 * 1024,
    );
  }, 60_000);
});
