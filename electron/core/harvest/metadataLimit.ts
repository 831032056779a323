/**
 * The most a file's metadata_ may take, as JSON text in UTF-8 (6 MiB). Each sidecar and each
 * command's output is held to 4 MiB, but several of them could add up past what the server takes
 * in one request (8 MiB): the record would then never reach it. A hook whose output would take
 * the metadata past this is left out, and named in hook_errors (hooks.ts); a usage_context
 * taken again past it is not stored (usageContextRefresh.ts, usageContext.ts).
 */
export const METADATA_MAX_BYTES = 6 * 1024 * 1024;
