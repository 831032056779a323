/**
 * Loopback listeners answer to loopback names only. A web page on another site whose own DNS
 * name its owner points at 127.0.0.1 (DNS rebinding) is, to the browser, the same site as that
 * name: it can send requests to the listener and read the answers, and its Origin then matches
 * the Host it sends. Only the Host header shows the page is not this listener's own.
 */

/** A Host header naming a loopback address (with or without its port). */
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?$/i;

export function namesLoopback(host: string | undefined): boolean {
  return LOOPBACK_HOST.test(host ?? '');
}

/** Whether an address to listen on (as `--host` takes it) is a loopback one. */
export function listensOnLoopback(address: string): boolean {
  return /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/i.test(address);
}
