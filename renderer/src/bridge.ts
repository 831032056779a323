/**
 * The renderer's only way to the core. In Electron the preload exposes `window.labstation`
 * (LabstationPreload, answering with envelopes);
 * in a browser (headless station, tests) the same contract runs over `POST /rpc/<name>` and
 * server-sent events on `/events`, authenticated by the token handed over in the URL fragment.
 */
import type {
  ApiArgs,
  ApiName,
  ApiResult,
  CoreEvent,
  LabstationBridge,
  LabstationPreload,
  RpcEnvelope,
} from '../../shared/api.js';
import type { ErrorCode } from '../../shared/errors.js';
import { ERROR_CODES, isApiError } from '../../shared/errors.js';

declare global {
  interface Window {
    labstation?: LabstationPreload;
  }
}

/** An error from the core, with the code that crossed the carrier and the message to show. */
export class BridgeError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

/** Whatever a carrier threw, as a BridgeError (IPC errors may arrive as plain objects). */
export function toBridgeError(error: unknown): BridgeError {
  if (error instanceof BridgeError) return error;
  if (isApiError(error)) return new BridgeError(error.code, error.message, error.details);
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    const details = (error as Error & { details?: unknown }).details;
    if (typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)) {
      return new BridgeError(code as ErrorCode, error.message, details);
    }
    return new BridgeError('internal', error.message || 'Something went wrong.');
  }
  return new BridgeError('internal', 'Something went wrong.');
}

/** Problems at named fields, as a refusal lists them in details.problems: field -> messages. */
export type FieldErrors = Record<string, string[]>;

/** The messages of `error` by the field they name (its path's first part); {} for none. */
export function fieldProblems(error: BridgeError): FieldErrors {
  const list = (error.details as { problems?: unknown } | undefined)?.problems;
  const found: FieldErrors = {};
  if (!Array.isArray(list)) return found;
  for (const p of list as { path?: unknown; message?: unknown }[]) {
    const field = Array.isArray(p?.path) && typeof p.path[0] === 'string' ? p.path[0] : '';
    if (field && typeof p.message === 'string') (found[field] ??= []).push(p.message);
  }
  return found;
}

const TOKEN_KEY = 'labstation.token';

/** What a `#token=` of the address bar holds; null for one spoiled (a `%` not followed by hex). */
function decodedToken(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/**
 * Takes `#token=...` out of the address bar and keeps it for this tab only. A spoiled one
 * (copied in part, say) replaces the token kept: the page then asks for the station's link.
 */
export function takeTokenFromUrl(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (match?.[1]) {
    const token = decodedToken(match[1]);
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
    const url = window.location.pathname + window.location.search;
    window.history.replaceState(window.history.state, '', url);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** When the core stopped answering (ms), or null while it answers. */
let unreachableSince: number | null = null;
const reachListeners = new Set<() => void>();

function setReachable(reachable: boolean): void {
  if (reachable === (unreachableSince === null)) return;
  unreachableSince = reachable ? null : Date.now();
  for (const listener of [...reachListeners]) listener();
}

/**
 * Since when the station has not answered (ms), or null while it answers: in browser mode its
 * process may stop (or its loopback connection break) under an open page, which then shows
 * what it last read; the IPC carrier never breaks. Set by a request that gets no answer and by
 * the event stream breaking; cleared by any answer, and by the stream connecting again.
 */
export function coreUnreachableSince(): number | null {
  return unreachableSince;
}

/** Calls `listener` when coreUnreachableSince changes. */
export function onCoreReachability(listener: () => void): () => void {
  reachListeners.add(listener);
  return () => reachListeners.delete(listener);
}

/** The preload answers with envelopes (errors lose their fields crossing the context bridge). */
function preloadBridge(preload: LabstationPreload): LabstationBridge {
  return {
    async call<N extends ApiName>(name: N, args: ApiArgs<N>): Promise<ApiResult<N>> {
      let envelope: RpcEnvelope;
      try {
        envelope = await preload.invoke(name, args);
      } catch (error) {
        throw toBridgeError(error);
      }
      if (envelope.ok) return envelope.result as ApiResult<N>;
      throw toBridgeError(envelope.error);
    },
    subscribe: (listener) => preload.subscribe(listener),
  };
}

function httpBridge(token: string | null): LabstationBridge {
  const headers = (): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
  const listeners = new Set<(event: CoreEvent) => void>();
  let stream: AbortController | null = null;

  const dispatch = (event: CoreEvent): void => {
    for (const listener of [...listeners]) listener(event);
  };

  return {
    async call<N extends ApiName>(name: N, args: ApiArgs<N>): Promise<ApiResult<N>> {
      let response: Response;
      try {
        response = await fetch(`/rpc/${encodeURIComponent(name)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers() },
          body: JSON.stringify(args),
        });
      } catch {
        setReachable(false);
        throw new BridgeError('internal', 'The station does not answer. Is it still running?');
      }
      setReachable(true);
      const body: unknown = await response.json().catch(() => undefined);
      if (!response.ok) {
        if (isApiError(body)) throw new BridgeError(body.code, body.message, body.details);
        throw new BridgeError('internal', `The station answered ${response.status}.`);
      }
      return body as ApiResult<N>;
    },
    subscribe(listener) {
      listeners.add(listener);
      if (!stream) {
        stream = new AbortController();
        void readEvents(headers, dispatch, stream.signal);
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && stream) {
          stream.abort();
          stream = null;
        }
      };
    },
  };
}

const reconnectListeners = new Set<() => void>();

/**
 * Called when the event stream is back after a break: events may have been missed, so the
 * screen should read the state again. (The preload's IPC channel does not break.)
 */
export function onEventsReconnected(listener: () => void): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}

/** Reads `/events` as server-sent events, reconnecting with backoff until aborted. */
async function readEvents(
  headers: () => Record<string, string>,
  dispatch: (event: CoreEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  let delay = 1000;
  let connectedBefore = false;
  while (!signal.aborted) {
    try {
      const response = await fetch('/events', {
        headers: { accept: 'text/event-stream', ...headers() },
        signal,
      });
      // It answered: reachable, whatever the answer.
      setReachable(true);
      if (!response.ok || !response.body) throw new Error(`events: ${response.status}`);
      delay = 1000;
      if (connectedBefore) for (const listener of [...reconnectListeners]) listener();
      connectedBefore = true;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const blocks = buffer.split(/\r?\n\r?\n/);
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const event = parseEventBlock(block);
          if (event) dispatch(event);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      // No answer (fetch throws a TypeError), or the stream broke under its read: the station
      // has stopped, or is stopping. A stream that ended cleanly is tried again first.
      if (!(error instanceof Error && error.message.startsWith('events: '))) setReachable(false);
    }
    await wait(delay, signal);
    // At most a few seconds apart: a restarted station (or server) has nobody logged on, and
    // the screen learns it only on reconnecting (session.restore); a try costs one request.
    delay = Math.min(delay * 2, 3_000);
  }
}

/** One SSE block: its `data:` lines joined, parsed as a CoreEvent; comments are ignored. */
export function parseEventBlock(block: string): CoreEvent | null {
  const data = block
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
  if (!data) return null;
  try {
    const value: unknown = JSON.parse(data);
    if (typeof value === 'object' && value !== null && 'type' in value) return value as CoreEvent;
  } catch {
    // A malformed event is skipped; the next refresh brings the state back in line.
  }
  return null;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = window.setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        window.clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

let bridge: LabstationBridge | null = null;

export function getBridge(): LabstationBridge {
  if (!bridge) {
    if (window.labstation) bridge = preloadBridge(window.labstation);
    else {
      bridge = httpBridge(takeTokenFromUrl());
      // The station's link pasted into this tab changes the fragment only, which loads
      // nothing: the page starts again with its token.
      window.addEventListener('hashchange', () => {
        if (!/(?:^#|&)token=/.test(window.location.hash)) return;
        takeTokenFromUrl();
        window.location.reload();
      });
    }
  }
  return bridge;
}

/** Shorthand used by the stores. */
export function call<N extends ApiName>(name: N, args: ApiArgs<N>): Promise<ApiResult<N>> {
  return getBridge().call(name, args);
}
