import type { Db } from './open.js';
import { migration001 } from './migrations/001_station_foundation.js';
import { migration002 } from './migrations/002_server_mode.js';
import { migration003 } from './migrations/003_station_sync.js';
import { migration004 } from './migrations/004_server_mail_outbox.js';
import { migration005 } from './migrations/005_usage_events_pages_answers.js';
import { migration006 } from './migrations/006_harvest.js';
import { migration007 } from './migrations/007_harvest_api.js';
import { migration008 } from './migrations/008_notebook.js';
import { migration009 } from './migrations/009_reservations.js';
import { migration010 } from './migrations/010_reservations_to_stations.js';
import { migration011 } from './migrations/011_instrument_history_pending.js';
import { migration012 } from './migrations/012_file_path_trigrams.js';
import { migration013 } from './migrations/013_file_usage_elsewhere.js';
import { migration014 } from './migrations/014_outbox_refused_held.js';
import { migration015 } from './migrations/015_autoincrement_harvest_ids.js';
import { migration016 } from './migrations/016_credentials_version.js';
import { migration017 } from './migrations/017_sync_change_nonce.js';
import { migration018 } from './migrations/018_ended_jwts.js';
import { migration019 } from './migrations/019_outbox_waits_for.js';
import { migration020 } from './migrations/020_station_install.js';
import { migration021 } from './migrations/021_install_acked_through.js';
import { migration022 } from './migrations/022_outbox_sent.js';
import { migration023 } from './migrations/023_deactivated_api_tokens.js';
import { migration024 } from './migrations/024_search_nfc.js';
import { migration025 } from './migrations/025_reported_at.js';
import { migration026 } from './migrations/026_failed_transfers_index.js';
import { migration027 } from './migrations/027_metadata_names_nfc.js';
import { migration028 } from './migrations/028_files_work_attempts.js';
import { migration029 } from './migrations/029_metadata_units_nfc.js';
import { migration030 } from './migrations/030_metadata_units_trimmed.js';
import { migration031 } from './migrations/031_autoincrement_uploads.js';
import { migration032 } from './migrations/032_made_folders.js';
import { migration033 } from './migrations/033_server_validation.js';
import { migration034 } from './migrations/034_usage_to_validate_index.js';
import { migration035 } from './migrations/035_usage_form_version.js';
import { migration036 } from './migrations/036_ack_seq.js';
import { migration037 } from './migrations/037_pending_place.js';
import { migration038 } from './migrations/038_retry_backoff.js';
import { migration039 } from './migrations/039_upload_placing.js';
import { migration040 } from './migrations/040_effect_form.js';
import { migration041 } from './migrations/041_transfer_from_server.js';
import { migration042 } from './migrations/042_outbox_refused.js';
import { migration043 } from './migrations/043_area_tool_spans.js';
import { migration044 } from './migrations/044_station_instruments_backfill.js';
import { migration045 } from './migrations/045_login_locks.js';
import { migration046 } from './migrations/046_source_without_case.js';
import { migration047 } from './migrations/047_late_sidecars.js';
import { migration048 } from './migrations/048_wrong_pins.js';
import { migration049 } from './migrations/049_file_written_by.js';
import { migration050 } from './migrations/050_outbox_record_index.js';
import { migration051 } from './migrations/051_former_rights_end.js';
import { migration052 } from './migrations/052_usage_diverged.js';
import { migration053 } from './migrations/053_mail_copy_due.js';
import { migration054 } from './migrations/054_final_sigma.js';
import { migration055 } from './migrations/055_files_by_usage.js';
import { migration056 } from './migrations/056_failed_transfers_ended.js';
import { migration057 } from './migrations/057_station_answers_not_kept.js';
import { migration058 } from './migrations/058_shutdown_cleared_on_server.js';

/**
 * Numbered schema migrations. Each runs in one transaction and sets PRAGMA user_version to its
 * number. Never edit a migration that has shipped: add the next one.
 *
 * One file per migration in migrations/ (NNN_name.ts, exporting migrationNNN), listed here in
 * order; a file is never edited once shipped. Add the next one at the end of the list
 * (test/unit/db/migrationFiles.test.ts checks each file is listed once, in order).
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Work SQL text cannot do alone, run after `sql` in the same transaction. */
  run?: (db: Db) => void;
  /**
   * Rebuilds tables that others reference: foreign keys are off while it runs (so dropping
   * the old table deletes nothing through ON DELETE), and checked before it commits.
   */
  rebuildsTables?: boolean;
}

export const migrations: readonly Migration[] = [
  migration001,
  migration002,
  migration003,
  migration004,
  migration005,
  migration006,
  migration007,
  migration008,
  migration009,
  migration010,
  migration011,
  migration012,
  migration013,
  migration014,
  migration015,
  migration016,
  migration017,
  migration018,
  migration019,
  migration020,
  migration021,
  migration022,
  migration023,
  migration024,
  migration025,
  migration026,
  migration027,
  migration028,
  migration029,
  migration030,
  migration031,
  migration032,
  migration033,
  migration034,
  migration035,
  migration036,
  migration037,
  migration038,
  migration039,
  migration040,
  migration041,
  migration042,
  migration043,
  migration044,
  migration045,
  migration046,
  migration047,
  migration048,
  migration049,
  migration050,
  migration051,
  migration052,
  migration053,
  migration054,
  migration055,
  migration056,
  migration057,
  migration058,
];

export const LATEST_VERSION = migrations[migrations.length - 1]?.version ?? 0;
