/**
 * A scraper that hangs up in the middle of the exposition (`curl … | head`, a Prometheus timeout) is
 * the scraper's doing: the scrape stops reading the database, and nothing is logged as a failure (it
 * was: "metrics scrape failed", with a stack trace, for a stream already closed).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../core/base/log.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";

const TOKEN = "metrics-hang-up-token";
const lines: string[] = [];
let h: Harness;
let base: string;

beforeAll(async () => {
  // On libSQL, where reading a page takes a while: the scraper leaves while one is read.
  h = await createHarness({ store: "libsql", config: { metricsToken: TOKEN }, logger: createLogger("info", (line) => lines.push(line)) });
  // Pages of 500 certificates: several of them, so the exposition is still being read when the scraper leaves.
  for (let i = 0; i < 3000; i++) {
    expect(await h.store.certificates.insert(certificateRecord({ organizationId: h.org.id, mode: "live" }), { limit: 10_000, events: [] })).toBe("created");
  }
  h.app.listen({ port: 0, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${h.app.server!.port}`;
});
afterAll(async () => {
  await h?.app.stop(true);
  await h?.close();
});

test("a scraper that reads the first chunk and hangs up leaves no error in the log", async () => {
  const whole = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect((await whole.text()).split("\n").filter((line) => line.startsWith("certkeeper_certificate_days_until_expiry{")).length).toBe(3000);
  for (let i = 0; i < 5; i++) {
    // As `curl … | head -3`: the first lines read, then the connection closed.
    const socket = await Bun.connect({ hostname: "127.0.0.1", port: Number(h.app.server!.port), socket: { data: (s) => void s.end() } });
    socket.write(`GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`);
    await Bun.sleep(30);
  }
  await Bun.sleep(500);
  expect(lines.filter((line) => JSON.parse(line).level === "error")).toEqual([]);
});
