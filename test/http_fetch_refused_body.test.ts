/**
 * The HTTP client every outside document is read with (ARI, MTA-STS policies, CT logs and search,
 * log lists) refuses an answer declared larger than it may be, and drops its body unread. What the
 * server already sent then arrives at a destroyed body: that must end there, not as an error no one
 * listens to, which would end the whole process (one answer from a hostile server would stop
 * certkeeper). Sent at once, compressed or not, several times over one connection pool.
 */
import { afterAll, expect, test } from "bun:test";
import http from "node:http";
import { gzipSync } from "node:zlib";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { FetchFailure } from "../core/net/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

const bodies = {
  gzip: { body: gzipSync(Buffer.alloc(64 * 1024 * 1024 - 1)), headers: { "content-encoding": "gzip" } },
  plain: { body: Buffer.alloc(200 * 1024, 0x61), headers: {} },
};
const server = http.createServer((req, res) => {
  const { body, headers } = bodies[req.url === "/gzip" ? "gzip" : "plain"];
  res.on("error", () => {});
  res.writeHead(200, { ...headers, "content-length": String(body.length) });
  res.end(body);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as { port: number }).port;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
afterAll(async () => {
  await fetcher.close();
  server.close();
});

for (const kind of ["gzip", "plain"] as const) {
  test(`an answer declared too large (${kind}, sent at once) is refused, and nothing is thrown after`, async () => {
    const uncaught: unknown[] = [];
    const listener = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", listener);
    try {
      for (let i = 0; i < 3; i++) {
        const failure = await fetcher.fetch({ url: `http://127.0.0.1:${port}/${kind}`, method: "GET" }, { timeoutMs: 2000, maxBytes: 8192 }).then(
          () => null,
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(FetchFailure);
        expect((failure as FetchFailure).reason).toBe("too_large");
      }
      // What was sent meanwhile arrives at the dropped bodies.
      await Bun.sleep(300);
    } finally {
      process.off("uncaughtException", listener);
    }
    expect(uncaught).toEqual([]);
  });
}
