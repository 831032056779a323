/**
 * A harvest_file record as a station pushes it (POST /sync/push), for the tests of what the
 * server takes of them (harvestIntake, harvestApi).
 */

/** The xxhash of every pushed file but where a test says otherwise. */
export const PUSHED_XXHASH = '0123456789abcdef0123456789abcdef';

/** The instrument a station pushes its files under, as the server knows it. */
export interface PushingInstrument {
  uuid: string;
  name: string;
  toolUuid: string;
}

/**
 * The record of the file /data/`name`, done, its ARK made of its uuid; `extra` sets any other
 * field (a state, a version, metadata).
 */
export function harvestFilePayload(
  instrument: PushingInstrument,
  uuid: string,
  name: string,
  extra: object = {},
): Record<string, unknown> {
  return {
    uuid,
    instrument_uuid: instrument.uuid,
    instrument: instrument.name,
    tool_uuid: instrument.toolUuid,
    persistent_id: `ark:99999/fk4${uuid.slice(-12).replace(/[^0-9bcdfghjkmnpqrstvwxz]/g, 'b')}`,
    persistent_id_type: 'ark',
    watch_path: '/data',
    source_path: `/data/${name}`,
    relative_path: name,
    filename: name,
    size: 1234,
    mtime_ms: 1,
    xxhash: PUSHED_XXHASH,
    hash_algorithm: 'xxh3-128',
    first_discovered_at: '2026-03-01T10:00:00.000Z',
    usage_event_uuid: null,
    metadata_: {},
    state: 'done',
    updated_at: '2026-03-01T10:00:04.000Z',
    ...extra,
  };
}
