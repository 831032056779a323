/**
 * How an upload is refused: the error that carries its HTTP status, the question whether the
 * request's station is still let in, and the details of an upload dropped meanwhile.
 */

/** A PATCH's upload whose record went meanwhile (dropped): the station opens it anew. */
export const DROPPED = 'upload: not found (dropped); start it again';
/** A POST's upload whose record went meanwhile: asked again, it is opened anew. */
export const DROPPED_RESUMED = 'upload: dropped while resumed; ask again';
export const DROPPED_OPENED = 'upload: dropped while opened; ask again';

/** A refusal with its HTTP status; `extra` goes into the body beside `detail`. */
export class UploadRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

/**
 * What the request's station would be refused now (the 401 detail: a new key, the station
 * disabled or deleted since the request was let in), or null while it is let in.
 */
export type RefusedNow = () => string | null;

/** Throws the 401 of a station refused now; asked where nothing awaits before the write. */
export function assertLetIn(refusedNow: RefusedNow): void {
  const refused = refusedNow();
  if (refused !== null) throw new UploadRefusal(401, refused);
}
