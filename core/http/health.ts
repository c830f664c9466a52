/** /healthz and /readyz: the process is up; the database answers and accepts writes. */
import { StorageUnavailableError, type Store } from "../store/ports.ts";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };
const READY_TIMEOUT_MS = 2000;
const READY_REASONS: Record<StorageUnavailableError["reason"], string> = {
  full: "The database refuses writes: its disk is full.",
  read_only: "The database refuses writes: it is read-only.",
  busy: "The database stays busy with other processes' writes.",
  no_answer: "The database does not answer.",
};

export function healthz(): Response {
  return new Response(JSON.stringify({ status: "ok" }), { headers: JSON_HEADERS });
}

export async function readyz(store: Store): Promise<Response> {
  try {
    await Promise.race([
      store.ping(),
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
