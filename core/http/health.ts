/** /healthz and /readyz: the process is up; the database answers and accepts writes. */
import { StorageUnavailableError, type Store } from "../store/ports.ts";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };
const READY_TIMEOUT_MS = 2000;
const READY_REASONS: Record<StorageUnavailableError["reason"], string> = {
  full: "The database refuses writes: its disk is full.",
  read_only: "The database refuses writes: it is read-only.",
  busy: "The database stays busy with other processes' writes.",
  no_answer: "The database does not answer.",
  unreachable: "The database server cannot be reached.",
};

export function healthz(): Response {
  return new Response(JSON.stringify({ status: "ok" }), { headers: JSON_HEADERS });
}

/**
 * The probe write under way for each store: concurrent /readyz requests (anyone may send them) share
 * it, so a flood of them is one write at a time, not one each ahead of the API's writes.
 */
const probing = new WeakMap<Store, Promise<void>>();

function probe(store: Store): Promise<void> {
  let pending = probing.get(store);
  if (!pending) {
    pending = store.ping().finally(() => probing.delete(store));
    probing.set(store, pending);
  }
  return pending;
}

export async function readyz(store: Store): Promise<Response> {
  try {
    await Promise.race([
      probe(store),
      new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), READY_TIMEOUT_MS).unref?.()),
    ]);
    return new Response(JSON.stringify({ status: "ready" }), { headers: JSON_HEADERS });
  } catch (error) {
    // A full or read-only database answers reads but loses every write: not ready for traffic.
    const reason =
      error instanceof StorageUnavailableError
        ? READY_REASONS[error.reason]
        : "The database does not answer.";
    return new Response(JSON.stringify({ status: "unavailable", reason }), {
      status: 503,
      headers: JSON_HEADERS,
    });
  }
}
