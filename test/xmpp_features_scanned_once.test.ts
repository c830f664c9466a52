/**
 * An XMPP server's stream features are judged for STARTTLS in time linear in their length. A hostile
 * server answers the client's stream header, in one burst within the exchange's 64 KB, with features
 * holding ~2,700 `<starttls/>` elements that do not name the TLS namespace, followed by ~3,300
 * `:starttls` that no `<prefix` opens: each occurrence is looked at once, not again for each element
 * (elements × junk × 65 characters, seconds of one check). Yardstick: the same server sending honest
 * features that do not offer STARTTLS (both are refused).
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import net from "node:net";
import { retrieveEndpoints } from "../core/tls/endpoint_retrieve.ts";
import { meterEventLoop } from "./support/event_loop_meter.ts";

setDefaultTimeout(120_000);
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const HEADER = "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='x' from='chat.example' version='1.0'>";

async function xmppServer(features: string): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    // After the client's stream header: the server's, then its features, in one write.
    socket.once("data", () => socket.write(`${HEADER}<stream:features>${features}</stream:features>`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise<void>((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))));
  return (server.address() as net.AddressInfo).port;
}

async function stall(label: string, features: string): Promise<number> {
  const port = await xmppServer(features);
  const stalls: number[] = [];
  let outcome = "";
  for (let i = 0; i < 3; i++) {
    const meter = meterEventLoop(5);
    const [endpoint] = await retrieveEndpoints("chat.example", port, { timeoutMs: 10_000, protocol: "xmpp", rules: [{ pattern: "chat.example", address: "127.0.0.1" }], allowPrivateTargets: true });
    stalls.push(meter.stop().longestMs);
    outcome = JSON.stringify(endpoint).slice(0, 160);
  }
  console.log(`${label}: ${features.length} bytes of features; ${outcome}; longest stall of each check ${stalls.map(Math.round).join(", ")} ms`);
  return Math.min(...stalls);
}

test("an XMPP server's features of many <starttls/> without the TLS namespace, then many ':starttls', are judged in linear time", async () => {
  const honest = await stall("honest", "<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms>");
  const hostile = await stall("hostile", "<starttls/>".repeat(2_700) + ":starttls".repeat(3_300));
  console.log(`stall: hostile ${Math.round(hostile)} ms vs honest ${Math.round(honest)} ms`);
  expect(hostile).toBeLessThan(Math.max(200, 10 * honest));
});
