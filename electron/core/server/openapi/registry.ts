/**
 * What the server's routes say about themselves, for the OpenAPI document (`/openapi.json`)
 * and the interactive docs (`/docs`). A route module describes each operation next to where it
 * registers it, with the same zod schemas that validate its input: the docs cannot drift from
 * what the server accepts.
 */
import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'HEAD';

/** Who may call an operation. */
export type Security = 'none' | 'user' | 'admin' | 'staff' | 'station';

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  example?: unknown;
  /** Response content type when not JSON (the docs page, the web UI). */
  contentType?: string;
}

export interface OperationDoc {
  method: HttpMethod;
  /** OpenAPI style: `/api/instruments/{id}`. */
  path: string;
  /** Groups operations in the docs: "Harvest management", "NEMO read API", ... */
  tag: string;
  summary: string;
  description?: string;
  security: Security;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  bodyExample?: unknown;
  /** Request content type when not JSON (the login form, raw uploads). */
  bodyContentType?: string;
  responses: Record<number, ResponseDoc>;
  /** A stable name for links to the operation; derived from the method and path when absent. */
  operationId?: string;
}

export class ApiDocs {
  readonly operations: OperationDoc[] = [];
  /** Tag name -> the sentence shown under its heading. */
  readonly tagDescriptions = new Map<string, string>();

  add(doc: OperationDoc): void {
    this.operations.push(doc);
  }

  describeTag(name: string, description: string): void {
    this.tagDescriptions.set(name, description);
  }
}

/** `/api/instruments/:id` -> `/api/instruments/{id}` */
export function openApiPath(fastifyPath: string): string {
  return fastifyPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}
