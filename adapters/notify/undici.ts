/**
 * Real undici, loaded at the first request rather than at start: most CLI commands send none, and it
 * is a quarter of the wiring's start (about 100 ms). Under Bun, "undici" resolves to Bun's built-in
 * shim, which ignores a dispatcher's `connect` function and would open sockets of its own, bypassing
 * core's guard; the file path loads the package.
 */
import { openedOnce } from "./lazy.ts";

export type Undici = typeof import("undici/index.js");

const undici = openedOnce<Undici>(() => import("undici/index.js"));

export function loadUndici(): Promise<Undici> {
  return undici.get();
}
