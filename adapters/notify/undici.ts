/**
 * Real undici, loaded at the first request rather than at start: most CLI commands send none, and it
 * is a quarter of the wiring's start (about 100 ms). Under Bun, "undici" resolves to Bun's built-in
 * shim, which ignores a dispatcher's `connect` function and would open sockets of its own, bypassing
 * core's guard; the file path loads the package.
 */
export type Undici = typeof import("undici/index.js");

let loading: Promise<Undici> | undefined;

export function loadUndici(): Promise<Undici> {
  // A failed load is not kept: the next request tries again.
  return (loading ??= import("undici/index.js").catch((error: unknown) => {
    loading = undefined;
    throw error;
  }));
}
