/** Where an upload's file goes under its storage location, and the answer a station gets. */
import { join } from 'node:path';
import type { UploadState } from '../../sync/uploadProtocol.js';
import type { ServerLocation, UploadRow } from './store.js';

/** Absolute destination of a checked relative path ('/'-separated). */
export function destinationIn(location: ServerLocation, relative: string): string {
  return join(location.base_path, ...relative.split('/'));
}

export function stateOf(row: UploadRow, location: ServerLocation): UploadState {
  const finished = row.state !== 'receiving';
  return {
    upload_id: row.uuid,
    status: row.state,
    offset: row.received,
    size: row.size,
    destination_path: row.final_path ?? row.destination_path,
    server_path: row.final_path ? destinationIn(location, row.final_path) : null,
    dest_checksum: finished ? row.dest_checksum : null,
    checksum_verified: finished,
    note: row.note,
  };
}
