/**
 * How AriClient reads a CA's answers (CONTRACT §19), with a CA that answers in-process (no network):
 *
 * - "A window ending before the lifetime midpoint on the first answer": a first window ending at the
 *   midpoint exactly is no request (a millisecond earlier is).
 * - "ending earlier than the previous answer's window for it", where answers "are shared by every
 *   certificate and organization that serves the same leaf": the previous answer is the shared one, so
 *   a certificate added later for a leaf another certificate already had an answer for sees the CA's
 *   request when the next window ends earlier (even though it is after the midpoint).
 * - CERTKEEPER_ACME_DIRECTORIES "over the built-ins": when a leaf's O and CN name different listed CAs,
 *   the first listed (the operator's own, listed before the built-ins) is asked.
 * - A CA is left alone for a minute only after a request that ran out of time (its other leaves'
 *   checks would each wait out the time limit): an answer too large for one leaf, or a refused
 *   connection, does not keep its other leaves from being asked.
 * - "The directories are the operator's choice": an http directory (an internal CA) may name an http
 *   renewalInfo URL; only a directory read over HTTPS must name an HTTPS one.
 * - An answer received "in the future" (the wall clock was set back since) is not kept until its
 *   Retry-After comes round again: the CA is asked at once.
 */
import { describe, expect, test } from "bun:test";
import { AriClient, ariCacheKey, type AriLeaf } from "../core/ari/mod.ts";
import { FetchFailure, type FetchRequest, type FetchResult, type HttpFetcher } from "../core/net/mod.ts";
import type { RenewalInfo } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { memoryRenewalInfo } from "../adapters/memory/renewal_info.ts";

const DIRECTORY = "https://acme.ari-client.test/directory";
const RENEWAL_INFO = "https://acme.ari-client.test/renewal-info";
const ISSUER = "Example Test CA";
/** Whole seconds, as RFC 3339 times in the answers carry them. */
const NOW = Date.UTC(2031, 4, 1, 12, 0, 0);

/** A CA that answers `window()` for every leaf, and counts the renewal-information requests. */
function caAnswering(window: () => { start: number; end: number }): { fetcher: HttpFetcher; asked: () => number } {
  let asked = 0;
  const json = (value: unknown, headers: Record<string, string> = {}): FetchResult => ({ status: 200, headers, body: new TextEncoder().encode(JSON.stringify(value)) });
  const fetcher: HttpFetcher = {
    async fetch(request: FetchRequest) {
      if (request.url === DIRECTORY) return json({ newNonce: "https://acme.ari-client.test/nonce", renewalInfo: RENEWAL_INFO });
      if (request.url.startsWith(`${RENEWAL_INFO}/`)) {
        asked++;
        const { start, end } = window();
        return json({ suggestedWindow: { start: new Date(start).toISOString(), end: new Date(end).toISOString() } }, { "retry-after": "3600" });
      }
      return { status: 404, headers: {}, body: new Uint8Array() };
    },
  };
  return { fetcher, asked: () => asked };
}

function leafOf(certId: string): AriLeaf {
  // 90 days, issued 10 days ago: the midpoint is 35 days from NOW.
  return { certId, issuerNames: [ISSUER], notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY };
}

const midpointOf = (leaf: AriLeaf) => leaf.notBefore + (leaf.notAfter - leaf.notBefore) / 2;

describe("AriClient: when the CA asks for early replacement (CONTRACT §19)", () => {
  test("a first window ending at the lifetime midpoint exactly is no request; one ending a second before it is", async () => {
    for (const [certId, before, requested] of [
      ["aYhba4dGQEHhs3uEe6CuLN4ByNQ.AQ", 0, false],
      ["aYhba4dGQEHhs3uEe6CuLN4ByNQ.Ag", 1000, true],
    ] as const) {
      const leaf = leafOf(certId);
      const end = midpointOf(leaf) - before;
      const ca = caAnswering(() => ({ start: end - DAY, end }));
      const client = new AriClient({ fetcher: ca.fetcher, cache: memoryRenewalInfo(), directories: [{ issuer: ISSUER, url: DIRECTORY }], timeoutMs: 5_000 });
      const info = await client.renewalInfo(leaf, null, NOW);
      expect(ca.asked()).toBe(1);
      expect(info?.lastError).toBeNull();
      expect(info?.window).toEqual({ start: end - DAY, end });
      expect(info?.requestedEnd).toBe(requested ? end : null);
    }
  });

  test("a certificate added later for a leaf already answered about: a window ending earlier than the shared answer's is a request", async () => {
    const leaf = leafOf("aYhba4dGQEHhs3uEe6CuLN4ByNQ.Aw");
    const cache = memoryRenewalInfo();
    // Another certificate's answer for the same leaf, 7 hours ago, due to be asked again an hour ago:
    // its window ends 50 days from now (after the midpoint: no request).
    const shared: RenewalInfo = {
      window: { start: NOW + 48 * DAY, end: NOW + 50 * DAY },
      explanationUrl: null,
      checkedAt: NOW - 7 * HOUR,
      requestedEnd: null,
      requested: null,
      nextAt: NOW - HOUR,
      lastError: null,
    };
    await cache.put(ariCacheKey(leaf), shared, leaf.notAfter, NOW - 7 * HOUR);
    // The CA now suggests a window ending 40 days from now: still after the midpoint (35 days), but
    // earlier than the window it gave before.
    const earlier = { start: NOW + 39 * DAY, end: NOW + 40 * DAY };
    const ca = caAnswering(() => earlier);
    const client = new AriClient({ fetcher: ca.fetcher, cache, directories: [{ issuer: ISSUER, url: DIRECTORY }], timeoutMs: 5_000 });
    // The new certificate has no renewal information of its own yet.
    const info = await client.renewalInfo(leaf, null, NOW);
    expect(ca.asked()).toBe(1);
    expect(info?.window).toEqual(earlier);
    expect(info?.requestedEnd).toBe(earlier.end);
    expect(info?.requested?.window).toEqual(earlier);
  });
});

describe("AriClient: which directory is asked (CONTRACT §19)", () => {
  test("an issuer whose O and CN match different entries: the first listed wins, whichever name matches it", () => {
    const { fetcher } = caAnswering(() => ({ start: NOW, end: NOW + DAY }));
    const client = new AriClient({
      fetcher,
      cache: memoryRenewalInfo(),
      // The operator's entry for the intermediate's CN, then the built-in one for the O.
      directories: [
        { issuer: "R11", url: "https://proxy.ari-client.test/directory" },
        { issuer: "Let's Encrypt", url: "https://acme-v02.api.letsencrypt.org/directory" },
      ],
      timeoutMs: 5_000,
    });
    expect(client.directoryFor(["Let's Encrypt", "R11"])).toBe("https://proxy.ari-client.test/directory");
    expect(client.directoryFor(["r11", "let's encrypt"])).toBe("https://proxy.ari-client.test/directory");
    expect(client.directoryFor(["Let's Encrypt", "E7"])).toBe("https://acme-v02.api.letsencrypt.org/directory");
  });
});

describe("AriClient: a CA's failure for one leaf (CONTRACT §19)", () => {
  test("after a refused or oversized answer for one leaf, another leaf of the CA is asked at once; after a timeout it waits a minute", async () => {
    for (const reason of ["refused", "too_large", "timeout"] as const) {
      const failing = leafOf("aYhba4dGQEHhs3uEe6CuLN4ByNQ.BA");
      const other = leafOf("aYhba4dGQEHhs3uEe6CuLN4ByNQ.BQ");
      const window = { start: NOW + 48 * DAY, end: NOW + 50 * DAY };
      const ca = caAnswering(() => window);
      const fetcher: HttpFetcher = {
        async fetch(request, limits) {
          if (request.url.endsWith(`/${failing.certId}`)) throw new FetchFailure(reason, `the CA's answer: ${reason}`);
          return ca.fetcher.fetch(request, limits);
        },
      };
      const client = new AriClient({ fetcher, cache: memoryRenewalInfo(), directories: [{ issuer: ISSUER, url: DIRECTORY }], timeoutMs: 5_000 });
      const failed = await client.renewalInfo(failing, null, NOW);
      expect([failed?.window, failed?.nextAt]).toEqual([null, NOW + 6 * HOUR]);
      const info = await client.renewalInfo(other, null, NOW + 1_000);
      if (reason === "timeout") expect([ca.asked(), info?.window ?? null]).toEqual([0, null]);
      else expect([ca.asked(), info?.window, info?.lastError]).toEqual([1, window, null]);
    }
  });
});

describe("AriClient: a directory the operator serves over http (CONTRACT §19)", () => {
  test("an http directory naming an http renewalInfo URL is asked, and its window used", async () => {
    const directory = "http://127.0.0.1:14000/dir";
    const renewalInfo = "http://127.0.0.1:14000/renewal-info";
    const window = { start: NOW + 48 * DAY, end: NOW + 50 * DAY };
    const urls: string[] = [];
    const json = (value: unknown): FetchResult => ({ status: 200, headers: {}, body: new TextEncoder().encode(JSON.stringify(value)) });
    const fetcher: HttpFetcher = {
      async fetch(request) {
        urls.push(request.url);
        if (request.url === directory) return json({ renewalInfo });
        return json({ suggestedWindow: { start: new Date(window.start).toISOString(), end: new Date(window.end).toISOString() } });
      },
    };
    const leaf = leafOf("aYhba4dGQEHhs3uEe6CuLN4ByNQ.Bg");
    const client = new AriClient({ fetcher, cache: memoryRenewalInfo(), directories: [{ issuer: ISSUER, url: directory }], timeoutMs: 5_000 });
    const info = await client.renewalInfo(leaf, null, NOW);
    expect(urls).toEqual([directory, `${renewalInfo}/${leaf.certId}`]);
    expect([info?.window, info?.lastError]).toEqual([window, null]);
  });
});

describe("AriClient: an answer kept from before the clock was set back (CONTRACT §19)", () => {
  test("an answer received 12 hours in the future, due again an hour after it, is asked again now", async () => {
    const leaf = leafOf("aYhba4dGQEHhs3uEe6CuLN4ByNQ.Bw");
    const window = { start: NOW + 48 * DAY, end: NOW + 50 * DAY };
    const ca = caAnswering(() => window);
    const client = new AriClient({ fetcher: ca.fetcher, cache: memoryRenewalInfo(), directories: [{ issuer: ISSUER, url: DIRECTORY }], timeoutMs: 5_000 });
    const kept: RenewalInfo = {
      window: { start: NOW + 40 * DAY, end: NOW + 42 * DAY },
      explanationUrl: null,
      checkedAt: NOW + 12 * HOUR,
      requestedEnd: null,
      requested: null,
      nextAt: NOW + 13 * HOUR,
      lastError: null,
    };
    const info = await client.renewalInfo(leaf, kept, NOW);
    expect(ca.asked()).toBe(1);
    expect([info?.window, info?.checkedAt]).toEqual([window, NOW]);
    // An answer of this clock's past, due again in 13 hours, holds.
    const held = { ...kept, checkedAt: NOW - HOUR };
    expect(await client.renewalInfo(leafOf("aYhba4dGQEHhs3uEe6CuLN4ByNQ.CA"), held, NOW)).toBe(held);
    expect(ca.asked()).toBe(1);
  });
});
