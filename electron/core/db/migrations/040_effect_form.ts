import type { Migration } from '../migrations.js';

export const migration040: Migration = {
  version: 40,
  name: 'a withdrawal or problem report says which form of its usage made it',
  sql: `
      -- Station side: which of the tool's forms an answer with an effect was given on. A tool may
      -- ask a question of one name both at enable and at disable (a consumable counted before
      -- and after); the post-usage form's effects, told apart from the pre-usage form's by name
      -- alone, took in both (station/answerEffects.ts applyKeptAnswersEffects). Rows made before
      -- this, and those a server receives, have none.
      ALTER TABLE consumable_withdrawals ADD COLUMN form TEXT
        CHECK (form IN ('pre_usage', 'post_usage'));
      ALTER TABLE problem_reports ADD COLUMN form TEXT
        CHECK (form IN ('pre_usage', 'post_usage'));
    `,
};
