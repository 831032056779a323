import type { Migration } from '../migrations.js';

export const migration036: Migration = {
  version: 36,
  name: 'each push the server takes from a data dir is numbered, to tell what a restore lost',
  sql: `
      -- Server side: install_ack_seq counts the pushes it took records from the data dir that
      -- holds the key (sync/routes.ts). The highest outbox id taken (install_acked_through)
      -- cannot tell a restore that lost only records taken late: set aside, then taken after
      -- rows of higher ids. The count moves with every push taken, late ones too.
      ALTER TABLE stations ADD COLUMN install_ack_seq INTEGER;
      -- Station side: the count of the push that took each kept row (null: a server before
      -- it, or kept before it). A count answered below it means the server lost that push
      -- (sync/resend.ts).
      ALTER TABLE outbox_sent ADD COLUMN ack_seq INTEGER;
      CREATE INDEX outbox_sent_ack_seq ON outbox_sent(ack_seq);
    `,
};
