/**
 * The sender a server is given (LABSTATION_MAIL_FROM, `Name <address>` or an address) reaches
 * each mail as one mailbox, its whole display name quoted where the header needs it, and the
 * Message-ID's domain in ASCII: the file transport writes the message nodemailer composes, as
 * the SMTP transport sends it. A name holding `:` made the From header a group, and one holding
 * `,` or `;` lost its first part; a domain with an umlaut went raw into Message-ID.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { fileTransport, parseFrom } from '../../electron/core/mail/transport.js';
import { checkMailEnv } from '../../electron/core/runServer.js';
import { tempDir } from './helpers.js';
import { mailRow } from './mailRow.js';
import { parseMessage } from './smtpSink.js';

it('writes each sender as one mailbox with its whole name, and an ASCII Message-ID', async () => {
  const dir = tempDir('labstation-mail-from-');
  const transport = fileTransport(dir);
  const cases: [string, string, string][] = [
    [
      'Facility: EM Lab <lab@universität.de>',
      '"Facility: EM Lab" <lab@xn--universitt-y5a.de>',
      'xn--universitt-y5a.de',
    ],
    ['Lab, Facility <lab@example.org>', '"Lab, Facility" <lab@example.org>', 'example.org'],
    ['Lab; x <lab@example.org>', '"Lab; x" <lab@example.org>', 'example.org'],
    [
      '"EM \\"Core\\" Lab" <lab@example.org>',
      '"EM \\"Core\\" Lab" <lab@example.org>',
      'example.org',
    ],
    ['lab@example.org', 'lab@example.org', 'example.org'],
  ];
  try {
    for (const [i, [from, header, domain]] of cases.entries()) {
      const mail = mailRow(i + 1);
      await transport.send(mail, from);
      const name = readdirSync(dir).find((n) => n.includes(mail.uuid) && n.endsWith('.eml'));
      const message = parseMessage(readFileSync(join(dir, String(name)), 'latin1'));
      expect(message.headers.get('from'), from).toBe(header);
      expect(message.headers.get('message-id'), from).toBe(`<${mail.uuid}@${domain}>`);
    }
  } finally {
    transport.close();
  }
});

it('reads a sender setting as its name and address', () => {
  expect(parseFrom('Facility: EM Lab <lab@example.org>')).toEqual({
    name: 'Facility: EM Lab',
    address: 'lab@example.org',
  });
  expect(parseFrom(' "A \\"B\\"" < lab@example.org > ')).toEqual({
    name: 'A "B"',
    address: 'lab@example.org',
  });
  expect(parseFrom('lab@example.org')).toEqual({ name: '', address: 'lab@example.org' });
});

it('refuses at start a sender whose address is not one address, naming the variable', () => {
  for (const from of ['Lab <a@b, c@d>', 'Lab <a;b@c>', 'a@b>', 'Lab']) {
    expect(() => checkMailEnv({ LABSTATION_MAIL_FROM: from }), from).toThrow(
      /^LABSTATION_MAIL_FROM: .* is not an e-mail address/,
    );
  }
  expect(() =>
    checkMailEnv({ LABSTATION_MAIL_FROM: 'Facility: EM Lab <lab@example.org>' }),
  ).not.toThrow();
});
