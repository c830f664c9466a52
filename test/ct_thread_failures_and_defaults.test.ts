/**
 * The CT reading thread (adapters/ct_threads), its failure modes: what a log said (Retry-After, 404)
 * survives the trip back from the thread, reads under way end when the thread is closed, a new thread
 * after a crash is given the watched domains again, and after a crash reading stays on the event loop
 * (30 s by default). A real HTTP server on 127.0.0.1 and, for crashes, a stand-in thread.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CtReadThread } from "../adapters/ct_threads/mod.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { LogFailure, type EntryFetch } from "../core/ctlogs/mod.ts";
import type { FetchLimits, FetchRequest, FetchResult, HttpFetcher } from "../core/net/mod.ts";

let server: ReturnType<typeof Bun.serve>;
let base: string;
const hung: Array<() => void> = [];

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/slow-down") return new Response("slow down", { status: 429, headers: { "retry-after": "120" } });
      if (path === "/gone") return new Response("not here", { status: 404 });
      // Never answers (until the test ends).
      return new Promise<Response>((resolve) => hung.push(() => resolve(new Response("late"))));
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => {
  for (const release of hung) release();
  server.stop(true);
});

const fetchOf = (url: string): EntryFetch => ({ url, timeoutMs: 10_000, format: "get-entries", first: 0, asked: 1 });
const watches = (version: string, ...domains: string[]) => ({ version, domains: new Set(domains) });

/** An event-loop fetcher that records what it was asked for and answers nothing usable. */
function recordingFetcher(): HttpFetcher & { urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    async fetch(request: FetchRequest, _limits: FetchLimits): Promise<FetchResult> {
      urls.push(request.url);
      return { status: 503, headers: {}, body: new Uint8Array() };
    },
  };
}

describe("the CT reading thread: a log's answer crosses the thread whole", () => {
  test("a 429 with Retry-After read on the thread is a LogFailure carrying the wait; a 404 one that says not found", async () => {
    const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
    const reader = new CtReadThread({ extraCaFile: undefined, resolve: [], fetcher });
    try {
      const slow = await reader.read(fetchOf(`${base}/slow-down`), watches("1", "a.example")).then(
        () => null,
        (error: unknown) => error,
      );
      expect(slow).toBeInstanceOf(LogFailure);
      expect((slow as LogFailure).message).toContain("asked to slow down (HTTP 429)");
      expect((slow as LogFailure).retryAfterMs).toBeGreaterThan(110_000);
      expect((slow as LogFailure).retryAfterMs).toBeLessThanOrEqual(120_000);
      expect((slow as LogFailure).notFound).toBe(false);
      const gone = await reader.read(fetchOf(`${base}/gone`), watches("1", "a.example")).then(
        () => null,
        (error: unknown) => error,
      );
      expect(gone).toBeInstanceOf(LogFailure);
      expect((gone as LogFailure).notFound).toBe(true);
      expect((gone as LogFailure).retryAfterMs).toBeNull();
    } finally {
      await reader.close();
      await fetcher.close();
    }
  });

  test("close() ends a read under way at once with the reason, rather than leaving it waiting on a log that never answers", async () => {
    const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
    const reader = new CtReadThread({ extraCaFile: undefined, resolve: [], fetcher });
    try {
      const reading = reader.read(fetchOf(`${base}/hang`), watches("1", "a.example")).then(
        () => "answered",
        (error: Error) => error.message,
      );
      // Under way on the thread: the request reached the server.
      const deadline = performance.now() + 10_000;
      while (hung.length === 0 && performance.now() < deadline) await Bun.sleep(10);
      expect(hung.length).toBeGreaterThan(0);
      const closing = performance.now();
      await reader.close();
      expect(await Promise.race([reading, Bun.sleep(5_000).then(() => "still waiting")])).toBe("the CT reading thread was closed");
      expect(performance.now() - closing).toBeLessThan(5_000);
    } finally {
      await fetcher.close();
    }
  });
});

describe("the CT reading thread: after a crash", () => {
  const script = new URL("./support/ct_echo_thread.ts", import.meta.url);

  test("a new thread is given the watched domains with its first read, though they have not changed", async () => {
    const reader = new CtReadThread({ extraCaFile: undefined, resolve: [], fetcher: recordingFetcher(), script, restartAfterMs: 0 });
    try {
      const v1 = watches("v1", "watched.example");
      expect(await reader.read(fetchOf("a"), v1)).toEqual({ held: ["watched.example"] } as never);
      await expect(reader.read(fetchOf("die"), v1)).rejects.toThrow("the CT reading thread ended (exit code 3)");
      // The next read starts a new thread, which knows nothing yet.
      expect(await reader.read(fetchOf("b"), v1)).toEqual({ held: ["watched.example"] } as never);
    } finally {
      await reader.close();
    }
  });

  test("by default reading stays on the event loop after a crash: the next reads are the event loop's, no new thread", async () => {
    const fetcher = recordingFetcher();
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (message: string) => void warnings.push(message), error() {} } as never;
    const reader = new CtReadThread({ extraCaFile: undefined, resolve: [], fetcher, script, logger });
    try {
      const v1 = watches("v1", "watched.example");
      expect(await reader.read(fetchOf("a"), v1)).toEqual({ held: ["watched.example"] } as never);
      await expect(reader.read(fetchOf("die"), v1)).rejects.toThrow("the CT reading thread ended (exit code 3)");
      expect(warnings).toEqual(["the CT reading thread ended (exit code 3): reading on the event loop for a while"]);
      // Read here, through the event loop's fetcher (its log answered 503: a LogFailure).
      await expect(reader.read(fetchOf("http://log.invalid/ct/v1/get-entries?start=0&end=0"), v1)).rejects.toBeInstanceOf(LogFailure);
      await expect(reader.read(fetchOf("http://log.invalid/ct/v1/get-entries?start=1&end=1"), v1)).rejects.toBeInstanceOf(LogFailure);
      expect(fetcher.urls).toEqual(["http://log.invalid/ct/v1/get-entries?start=0&end=0", "http://log.invalid/ct/v1/get-entries?start=1&end=1"]);
    } finally {
      await reader.close();
    }
  });
});
