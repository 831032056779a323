/**
 * npm run bench:forms — validating and rendering the 200-question benchmark form.
 * Node: parseQuestions and validateAnswers (which also computes the 50 formulas), side by side
 * with JSON.parse+stringify of the same answers as a floor. Chromium: the real React form
 * rendered from the built renderer, side by side with the browser's own constraint validation
 * (form.checkValidity) over the same rendered inputs.
 */
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium } from '@playwright/test';
import { RENDERER_DIR } from '../electron/core/paths.js';
import { parseQuestions, validateAnswers, type Question } from '../shared/questions/index.js';
import { benchAnswers, benchQuestions } from './formFixture.js';

function stats(samples: number[]): { median: number; p95: number; runs: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95), runs: sorted.length };
}

function time(runs: number, fn: () => void): { median: number; p95: number; runs: number } {
  for (let i = 0; i < 20; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return stats(samples);
}

const fmt = (s: { median: number; p95: number; runs: number }): string =>
  `median ${s.median.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms (${s.runs} runs)`;

function countQuestions(questions: Question[]): number {
  return questions.reduce((n, q) => n + 1 + (q.type === 'group' ? q.questions.length : 0), 0);
}

function nodeFigures(): void {
  const rawQuestions = benchQuestions();
  const parsed = parseQuestions(rawQuestions);
  if (!parsed.ok) throw new Error(`bench form invalid: ${parsed.problems[0]?.message}`);
  const answers = benchAnswers();
  const check = validateAnswers(parsed.questions, answers);
  if (!check.ok) throw new Error(`bench answers invalid: ${check.problems[0]?.message}`);
  console.log(
    `form: ${countQuestions(parsed.questions)} questions (${parsed.questions.length} top-level); ` +
      `answers JSON ${JSON.stringify(check.answers).length} bytes`,
  );
  console.log(
    `node  parseQuestions (definition checks)         ${fmt(time(200, () => parseQuestions(rawQuestions)))}`,
  );
  console.log(
    `node  validateAnswers (all rules + 50 formulas)  ${fmt(time(200, () => validateAnswers(parsed.questions, answers)))}`,
  );
  const text = JSON.stringify(answers);
  console.log(
    `node  reference: JSON.parse+stringify answers    ${fmt(time(200, () => JSON.stringify(JSON.parse(text))))}`,
  );
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.map': 'application/json',
};

async function browserFigures(): Promise<void> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0])).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    readFile(join(RENDERER_DIR, path === '/' ? 'bench.html' : path)).then(
      (body) =>
        res
          .writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' })
          .end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-gpu',
    ],
  });
  try {
    const renders: number[] = [];
    const commits: number[] = [];
    const browserValidate: number[] = [];
    const nativeValidate: number[] = [];
    const plainRenders: number[] = [];
    let fields = 0;
    for (let run = 0; run < 10; run++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`http://127.0.0.1:${port}/bench.html`);
      const result = await page.waitForFunction(
        () => (globalThis as unknown as { benchResult?: unknown }).benchResult,
        null,
        {
          timeout: 60_000,
        },
      );
      const r = (await result.jsonValue()) as {
        renderMs: number;
        commitMs: number;
        validateMs: number;
        nativeMs: number;
        plainRenderMs: number;
        fields: number;
        error?: string;
      };
      if (r.error) throw new Error(r.error);
      renders.push(r.renderMs);
      commits.push(r.commitMs);
      browserValidate.push(r.validateMs);
      nativeValidate.push(r.nativeMs);
      plainRenders.push(r.plainRenderMs);
      fields = r.fields;
      await page.close();
    }
    console.log(
      `chromium  render form, ${fields} inputs (to first paint)   ${fmt(stats(renders))}`,
    );
    console.log(`chromium    of which React render + DOM commit     ${fmt(stats(commits))}`);
    console.log(
      `chromium  validateAnswers in the page              ${fmt(stats(browserValidate))}`,
    );
    console.log(
      `chromium  reference: plain HTML form, same inputs     ${fmt(stats(plainRenders))}`,
    );
    console.log(`chromium  reference: form.checkValidity() native   ${fmt(stats(nativeValidate))}`);
  } finally {
    await browser.close();
    server.close();
  }
}

console.log(
  `machine: ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
);
nodeFigures();
await browserFigures();
