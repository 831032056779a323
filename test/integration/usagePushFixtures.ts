/**
 * A usage_event record as a station pushes it (POST /sync/push), for the tests of what the
 * server keeps of them (sync, serverIngestRules).
 */

/** The server's uuids of the people, project and tool a pushed usage names. */
export interface UsageRefs {
  user_uuid: string;
  project_uuid: string;
  tool_uuid: string;
}

/**
 * The payload of usage `uuid`, active since `start`, for the user (who also operates) and
 * project and tool of `refs`, at version 1 with nothing answered after; `over` sets any field.
 */
export function usagePayload(
  refs: UsageRefs,
  uuid: string,
  start: string,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    uuid,
    user_uuid: refs.user_uuid,
    operator_uuid: refs.user_uuid,
    project_uuid: refs.project_uuid,
    tool_uuid: refs.tool_uuid,
    start,
    end: null,
    validated: 0,
    remote_work: 0,
    pre_run_data: '{}',
    run_data: '',
    post_usage_pending: 0,
    reminder_due: 0,
    version: 1,
    ...over,
  };
}
