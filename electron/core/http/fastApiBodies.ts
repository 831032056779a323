/**
 * Bodies read as FastAPI reads them, for the routes that answer as FastAPI (the harvest API and
 * the log-in of spec 002): a body sent without a Content-Type, or as any `application/*+json`
 * (`application/merge-patch+json`, ...), is JSON; one of another type is its text, which the
 * route then refuses as the JSON object it is not (422 `model_type`), as FastAPI's model does.
 * Fastify would answer 415 to all of them, a status FastAPI never gives: a script that sends
 * `json.dumps(...)` with no header (Python's `http.client`, `requests` with `data=`) would
 * fail where the service it replaces took it.
 * Other routes keep Fastify's 415 for a type they do not read (the README's word for /rpc).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bodyLeftUnread, jsonTextReader } from './emptyJson.js';

/** `application/<anything>+json`, parameters after it allowed (charset). */
const SUFFIX_JSON = /^application\/[^\s;/]+\+json\s*(;|$)/i;

/** A media type as `type/subtype`, parameters after it allowed. */
const MEDIA_TYPE = /^\s*[^\s/;]+\/[^\s/;]+\s*(;|$)/;

export function readBodiesAsFastApi(app: FastifyInstance, fastApiRoute: RegExp): void {
  const readJson = jsonTextReader(app);
  // A Content-Type that is no media type is read as FastAPI reads it (Python's e-mail parser):
  // an empty one as none (JSON), any other as text/plain. Fastify would refuse it, 415.
  app.addHook('onRequest', (request, _reply, done) => {
    const type = request.headers['content-type'];
    if (type !== undefined && !MEDIA_TYPE.test(type) && fastApiRoute.test(request.url)) {
      if (type.trim() === '') delete request.headers['content-type'];
      else request.headers['content-type'] = 'text/plain';
    }
    done();
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const type = request.headers['content-type'];
    // Nothing is read for a request no route takes, nor for a DELETE (bodyLeftUnread).
    if (bodyLeftUnread(request)) {
      done(null, undefined);
      return;
    }
    if (!fastApiRoute.test(request.url)) {
      done(unsupported(type), undefined);
      return;
    }
    const text = String(body);
    if (type === undefined || SUFFIX_JSON.test(type)) readJson(request, text, done);
    else done(null, text);
  });
}

function unsupported(type: string | undefined): Error {
  return Object.assign(new Error(`Unsupported Media Type: ${type ?? '(none)'}`), {
    statusCode: 415,
    code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
  });
}

/**
 * The text fields of a `multipart/form-data` body (curl -F, a browser's form with
 * enctype="multipart/form-data"), which fastapi-users' log-in form reads as it reads an
 * urlencoded one. Parts that are files are left out (the log-in reads none). Throws a 400 "There
 * was an error parsing the body" (FastAPI's words) when the body does not follow its boundary.
 */
export function multipartFields(request: FastifyRequest, body: Buffer): Record<string, string> {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(
    request.headers['content-type'] ?? '',
  );
  const marker = boundary ? `--${boundary[1] ?? boundary[2]}` : null;
  const text = body.toString('utf8');
  const fields: Record<string, string> = {};
  const start = marker === null ? -1 : text.indexOf(marker);
  if (marker === null || start < 0) throw badBody();
  // Each part: its boundary line, headers, a blank line, its value, CRLF before the next one.
  const parts = text.slice(start + marker.length).split(`\r\n${marker}`);
  const last = parts.pop();
  if (last === undefined || !last.startsWith('--')) throw badBody();
  for (const part of parts) {
    const split = part.indexOf('\r\n\r\n');
    if (!part.startsWith('\r\n') || split < 0) throw badBody();
    const headers = part.slice(2, split);
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers);
    if (!disposition) throw badBody();
    const name = /(?:^|;)\s*name=(?:"([^"]*)"|([^\s;"]+))/i.exec(disposition[1]);
    if (!name) throw badBody();
    if (/(?:^|;)\s*filename\*?=/i.test(disposition[1])) continue;
    fields[name[1] ?? name[2]] = part.slice(split + 4);
  }
  return fields;
}

function badBody(): Error {
  return Object.assign(new Error('There was an error parsing the body'), { statusCode: 400 });
}
