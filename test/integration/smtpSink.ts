/**
 * A real SMTP server for the e-mail tests (test/fixtures/smtp-sink.js, the smtp-server
 * package) in a process of its own on loopback, and just enough message parsing to check what
 * it received.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface Received {
  rcpt: string[];
  headers: Map<string, string>;
  /** Body with quoted-printable soft breaks and escapes undone. */
  body: string;
}

/** Just enough RFC 5322 parsing for the assertions: unfolded headers (first of each name). */
export function parseMessage(raw: string, rcpt: string[] = []): Received {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  const body = raw
    .slice(split + 4)
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return { rcpt, headers, body };
}

const SMTP_SINK = join(import.meta.dirname, '..', 'fixtures', 'smtp-sink.js');

/**
 * A real SMTP server (test/fixtures/smtp-sink.js, the smtp-server package) in a process of its
 * own on loopback, which requires no TLS and accepts one login; it reports what it receives.
 */
export class TestSmtp {
  readonly messages: Received[] = [];
  logins = 0;
  private child: ChildProcess | null = null;
  port = 0;

  /** Listens on `port` of `host` (by default any port of 127.0.0.1, or the one it had). */
  async start(port = this.port, host = '127.0.0.1'): Promise<void> {
    const child = spawn(process.execPath, [SMTP_SINK, String(port), host], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    this.port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`smtp-sink exited ${code}`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        const event = JSON.parse(line) as
          | { event: 'listening'; port: number }
          | { event: 'login' }
          | { event: 'message'; rcpt: string[]; raw: string };
        if (event.event === 'listening') resolve(event.port);
        else if (event.event === 'login') this.logins += 1;
        else this.messages.push(parseMessage(event.raw, event.rcpt));
      });
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }

  about(uuid: string, kind: string): Received[] {
    return this.messages.filter(
      (m) => m.body.includes(`#/pending/${uuid}`) && m.headers.get('x-labstation-kind') === kind,
    );
  }
}
