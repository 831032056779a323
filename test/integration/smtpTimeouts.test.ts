/**
 * The SMTP transport gives up on a mail server that stops answering after its timeouts
 * (transport.ts SMTP_TIMEOUTS), not nodemailer's own ten minutes: a real TCP server on loopback
 * greets and then answers nothing. Given with the URL, the timeouts used to be dropped
 * (nodemailer reads only the URL when one is given), and one stalled server held every mail
 * behind the one it took, and a stop of the server with them.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { SMTP_TIMEOUTS, smtpTransport } from '../../electron/core/mail/transport.js';
import { mailRow } from './mailRow.js';
import { TestSmtp } from './smtpSink.js';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** An SMTP server that greets, then reads and answers nothing more. */
async function silentAfterGreeting(): Promise<string> {
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.write('220 sink.test ESMTP\r\n');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const mail = mailRow(1);

it('keeps the timeouts of a URL-given server: a silent one fails the send and the check', async () => {
  const url = await silentAfterGreeting();
  const transport = smtpTransport(url, { ...SMTP_TIMEOUTS, socketTimeout: 300 });
  try {
    await expect(transport.verify()).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    await expect(transport.send(mail, 'Lab <lab@example.org>')).rejects.toMatchObject({
      code: 'ETIMEDOUT',
    });
  } finally {
    transport.close();
  }
}, 10_000);

it('sends through one pooled connection where the URL asks for a pool (?pool=true)', async () => {
  // Made by createTransport before, which read `pool` from the URL; the transport made here
  // must too. The sink counts log-ins: one per connection.
  const sink = new TestSmtp();
  await sink.start();
  try {
    for (const [query, logins] of [
      ['?pool=true', 1],
      ['', 2],
    ] as const) {
      const before = sink.logins;
      const transport = smtpTransport(`smtp://labstation:s3cret@127.0.0.1:${sink.port}${query}`);
      try {
        await transport.send(mail, 'Lab <lab@example.org>');
        await transport.send(mailRow(2), 'Lab <lab@example.org>');
      } finally {
        transport.close();
      }
      expect(sink.logins - before, query || 'no pool').toBe(logins);
    }
  } finally {
    await sink.stop();
  }
}, 20_000);

it('keeps them with a pooled server too (?pool=true)', async () => {
  const url = await silentAfterGreeting();
  const transport = smtpTransport(`${url}?pool=true`, { ...SMTP_TIMEOUTS, socketTimeout: 300 });
  try {
    await expect(transport.send(mail, 'Lab <lab@example.org>')).rejects.toMatchObject({
      code: 'ETIMEDOUT',
    });
  } finally {
    transport.close();
  }
}, 10_000);
