import type { Migration } from '../migrations.js';

export const migration046: Migration = {
  version: 46,
  name: "a file's source path is looked up without letter case where its file system has none",
  sql: `
      -- A file's identity is its instrument and source path (records.ts latestBySource,
      -- knownSources). On Windows and macOS a watched folder typed anew in other case (d:\\data
      -- for D:\\Data) names the same files, whose records must be found; elsewhere the path as
      -- written decides, among the few records the same index gives for it without case. One
      -- index serves both, so a station writes no more per file than before.
      DROP INDEX harvest_files_source;
      CREATE INDEX harvest_files_source ON harvest_files(instrument_id, source_path COLLATE NOCASE);
  `,
};
