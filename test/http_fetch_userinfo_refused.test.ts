/**
 * The HTTP client for outside documents (ARI, MTA-STS, CT) never sends a URL's user info: a URL with
 * `user:password@` (a CA's or a log's answer names it, or a misconfiguration) is refused before any
 * connection, and the server never sees the request. Other URLs from it are fetched as usual.
 */
import { afterAll, expect, test } from "bun:test";
import http from "node:http";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { FetchFailure } from "../core/net/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

const seen: string[] = [];
const server = http.createServer((req, res) => {
  seen.push(`${req.url} ${req.headers.authorization ?? "-"}`);
  res.end("ok");
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as { port: number }).port;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
afterAll(async () => {
  await fetcher.close();
  server.close();
});

test.each([`http://user:secret@127.0.0.1:${port}/doc`, `http://user@127.0.0.1:${port}/doc`, `http://:secret@127.0.0.1:${port}/doc`])(
  "%s is refused before any connection",
  async (url) => {
    const failure = await fetcher.fetch({ url, method: "GET" }, { timeoutMs: 2000, maxBytes: 1024 }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(FetchFailure);
    expect((failure as FetchFailure).reason).toBe("refused");
    expect(seen).toEqual([]);
  },
);

test("the same URL without user info is fetched", async () => {
  const answer = await fetcher.fetch({ url: `http://127.0.0.1:${port}/doc`, method: "GET" }, { timeoutMs: 2000, maxBytes: 1024 });
  expect([answer.status, Buffer.from(answer.body).toString()]).toEqual([200, "ok"]);
  expect(seen).toEqual(["/doc -"]);
});
