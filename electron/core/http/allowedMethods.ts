/**
 * Which methods a path has routes for, so that a request with another method is answered
 * 405 with an `Allow` header (RFC 9110 §15.5.6), as Django REST framework and FastAPI answer
 * it, instead of Fastify's 404: a client that POSTs to a read-only list learns that the list
 * is there and what it takes.
 */
import type { FastifyInstance } from 'fastify';

interface RouteShape {
  pattern: RegExp;
  methods: Set<string>;
}

/** A Fastify route path (`/api/users/:id`, `/docs/*`) as a regular expression over a path. */
function patternOf(url: string): RegExp {
  const parts = url.split('/').map((part) => {
    if (part === '*') return '.*';
    if (part.startsWith(':')) return '[^/]+';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}$`);
}

export interface RouteMethodsOptions {
  /**
   * Which paths a catch-all route (`/*`: the UI's files, uiFiles.ts uiFileServed) serves. Left
   * out, or for a path it does not serve, the catch-all counts for no path: it would "allow"
   * GET everywhere. So `OPTIONS /` is 405 like any other path there is, where GET / is the page.
   */
  catchAll?: (path: string) => boolean;
}

/**
 * Starts recording the routes `app` gets from here on (call it before any route is added) and
 * returns a lookup: the methods of the routes whose path matches, sorted, or [] for none.
 */
export function recordRouteMethods(
  app: FastifyInstance,
  options: RouteMethodsOptions = {},
): (path: string) => string[] {
  const routes = new Map<string, RouteShape>();
  const catchAllMethods = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((method) =>
      String(method).toUpperCase(),
    );
    if (route.url === '/*') {
      for (const method of methods) catchAllMethods.add(method);
      return;
    }
    let shape = routes.get(route.url);
    if (!shape) {
      shape = { pattern: patternOf(route.url), methods: new Set() };
      routes.set(route.url, shape);
    }
    for (const method of methods) shape.methods.add(method);
  });
  return (path: string): string[] => {
    const allowed = new Set<string>();
    for (const shape of routes.values()) {
      if (shape.pattern.test(path)) for (const method of shape.methods) allowed.add(method);
    }
    if (catchAllMethods.size && options.catchAll?.(path)) {
      for (const method of catchAllMethods) allowed.add(method);
    }
    return [...allowed].sort();
  };
}
