/**
 * hash-wasm, loaded with require() on first use: XXH3-128 for the harvest and uploads, argon2id
 * for PINs and passwords.
 *
 * hash-wasm is one CommonJS file of 284 KB, every algorithm with its WebAssembly inline.
 * Imported from an ES module, Node first scans the whole file for its export names
 * (cjs-module-lexer). Here that took about 50 ms per thread, and require() takes about 11 ms.
 * A harvest starts four threads: the engine's, two copy workers and the service worker.
 * The engine's thread and the service worker never hash, so they never load hash-wasm.
 */
import { createRequire } from 'node:module';
import type * as HashWasmModule from 'hash-wasm';
import type { IHasher } from 'hash-wasm';

export type { IHasher };

type HashWasm = typeof HashWasmModule;

const require = createRequire(import.meta.url);
let loaded: HashWasm | undefined;

export function hashWasm(): HashWasm {
  loaded ??= require('hash-wasm') as HashWasm;
  return loaded;
}

/** A new XXH3-128 hasher (hash-wasm's createXXHash128). */
export function createXXHash128(): Promise<IHasher> {
  return hashWasm().createXXHash128();
}
