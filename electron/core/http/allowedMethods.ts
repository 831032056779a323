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

/**
 * Starts recording the routes `app` gets from here on (call it before any route is added) and
 * returns a lookup: the methods of the routes whose path matches, sorted, or [] for none. A
 * catch-all route (`/*`) is left out.
 */
export function recordRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const routes = new Map<string, RouteShape>();
  app.addHook('onRoute', (route) => {
    // The UI's files are served from a catch-all: every path would "allow" GET.
    if (route.url === '/*') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let shape = routes.get(route.url);
    if (!shape) {
      shape = { pattern: patternOf(route.url), methods: new Set() };
      routes.set(route.url, shape);
    }
    for (const method of methods) shape.methods.add(String(method).toUpperCase());
  });
  return (path: string): string[] => {
    const allowed = new Set<string>();
    for (const shape of routes.values()) {
      if (shape.pattern.test(path)) for (const method of shape.methods) allowed.add(method);
    }
    return [...allowed].sort();
  };
}
