/**
 * certkeeper's DNS client (CONTRACT §22) against a real Knot DNS on loopback, a validating Unbound in
 * front of a signed zone for the AD bit, and fixture servers for what no daemon does: silence,
 * answers for other names, floods, garbage, truncation games. Each fixture is checked against dig.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as dnsPacket from "dns-packet";
import { DnsClient, DnsFailure, MAX_RECORDS } from "../core/dns/mod.ts";
import { deadline } from "../core/net/mod.ts";
import { answerTo, dig, digFull, dnsDaemonsMissing, startFixtureDns, startKnot, startUnbound, type FixtureDnsServer, type KnotServer, type UnboundServer } from "./support/dns_servers.ts";

const missing = dnsDaemonsMissing();
if (missing) console.warn(`dns_client.test.ts: the daemon tests are skipped: ${missing}`);
const withDaemons = missing ? describe.skip : describe;

const LONG_TXT = Array.from({ length: 30 }, (_, i) => `big TXT "${String(i).padStart(2, "0")}-${"x".repeat(90)}"`).join("\n");
const ZONE = `
example CAA 0 issue "letsencrypt.org"
example CAA 0 iodef "mailto:security@example.test"
alias CNAME example
alias2 CNAME alias
empty TXT "not a CAA"
_25._tcp.mx TLSA 3 1 1 ${"ab".repeat(32)}
loop1 CNAME loop2
loop2 CNAME loop1
${LONG_TXT}
`;

let knot: KnotServer;
let signed: KnotServer;
let unbound: UnboundServer;
const fixtures: FixtureDnsServer[] = [];

const server = (port: number) => ({ address: "127.0.0.1", port });
const limit = (ms = 2000) => deadline(ms);

async function fixture(reply: Parameters<typeof startFixtureDns>[0]): Promise<FixtureDnsServer> {
  const started = await startFixtureDns(reply);
  fixtures.push(started);
  return started;
}

async function failure(promise: Promise<unknown>): Promise<DnsFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DnsFailure) return error;
    throw error;
  }
  throw new Error("the lookup succeeded");
}

beforeAll(async () => {
  if (missing) return;
  knot = await startKnot(ZONE);
  signed = await startKnot(`secure CAA 0 issue "pki.goog"\n`, { zone: "signed.", signed: true });
  unbound = await startUnbound({ zone: "signed.", port: signed.port }, signed.dnskeys());
}, 60_000);

afterAll(async () => {
  await Promise.all([knot?.close(), signed?.close(), unbound?.close(), ...fixtures.map((f) => f.close())]);
});

withDaemons("against Knot DNS (happy)", () => {
  test("lookup() reads the CAA records knot serves, as dig shows them", async () => {
    const client = new DnsClient([server(knot.port)]);
    const set = await client.lookup<{ flags: number; tag: string; value: string }>("example.test", "CAA", limit());
    expect(set.owner).toBe("example.test");
    expect(set.records.map((r) => `${r.flags} ${r.tag} "${r.value}"`).sort()).toEqual((await dig(knot.port, "CAA", "example.test")).sort());
    expect(set.authenticated).toBe(false);
  });

  test("lookup() follows CNAMEs to the records at the end of the chain", async () => {
    const client = new DnsClient([server(knot.port)]);
    const set = await client.lookup("alias2.test", "CAA", limit());
    expect([set.owner, set.records.length]).toEqual(["example.test", 2]);
  });

  test("a name without the records (NODATA) and a name that does not exist (NXDOMAIN) give empty sets", async () => {
    const results: string[] = [];
    const client = new DnsClient([server(knot.port)], { onLookup: ({ type, result }) => results.push(`${type}:${result}`) });
    expect((await client.lookup("empty.test", "CAA", limit())).records).toEqual([]);
    expect((await client.lookup("nowhere.test", "CAA", limit())).records).toEqual([]);
    expect(results).toEqual(["CAA:ok", "CAA:nxdomain"]);
  });

  test("an answer too large for UDP comes truncated (dig sees tc) and is read again over TCP", async () => {
    expect(await digFull(knot.port, "TXT", "big.test", ["+notcp", "+ignore", "+bufsize=1232"])).toMatch(/flags:[^;]*\btc\b/);
    const client = new DnsClient([server(knot.port)]);
    const set = await client.lookup<Buffer[]>("big.test", "TXT", limit());
    expect(set.records.length).toBe(30);
    expect(set.records.map((strings) => Buffer.concat(strings).toString()).sort()[29]).toBe(`29-${"x".repeat(90)}`);
  });

  test("TLSA records come with usage, selector, matching type and data", async () => {
    const client = new DnsClient([server(knot.port)]);
    const set = await client.lookup<{ usage: number; selector: number; matchingType: number; certificate: Buffer }>("_25._tcp.mx.test", "TLSA", limit());
    expect(set.records.map((r) => [r.usage, r.selector, r.matchingType, r.certificate.toString("hex")])).toEqual([[3, 1, 1, "ab".repeat(32)]]);
  });

  test("expandAlias() gives the end of a host name's CNAME chain, or the name itself", async () => {
    const client = new DnsClient([server(knot.port)]);
    expect(await client.expandAlias("alias2.test", limit())).toEqual({ target: "example.test", authenticated: false });
    expect(await client.expandAlias("example.test", limit())).toEqual({ target: "example.test", authenticated: false });
  });

  test("the AD bit of a validating resolver (Unbound, the signed zone's key as trust anchor) is reported; an authoritative server's answer is not validated", async () => {
    expect(await digFull(unbound.port, "CAA", "secure.signed")).toMatch(/flags:[^;]*\bad\b/);
    const validated = await new DnsClient([server(unbound.port)]).lookup("secure.signed", "CAA", limit());
    expect([validated.records.length, validated.authenticated]).toEqual([1, true]);
    const direct = await new DnsClient([server(signed.port)]).lookup("secure.signed", "CAA", limit());
    expect([direct.records.length, direct.authenticated]).toEqual([1, false]);
  });

  test("a resolver that refuses is passed over for the next one listed", async () => {
    const refusing = await fixture((query) => ({ message: answerTo(query, [], { rcode: "REFUSED" }) }));
    expect(await digFull(refusing.port, "CAA", "example.test")).toContain("status: REFUSED");
    const results: string[] = [];
    const client = new DnsClient([server(refusing.port), server(knot.port)], { onLookup: ({ result }) => results.push(result) });
    expect((await client.lookup("example.test", "CAA", limit())).records.length).toBe(2);
    expect(results).toEqual(["error", "ok"]);
  });
});

withDaemons("failures (error)", () => {
  test("SERVFAIL fails the lookup, naming the resolver", async () => {
    const failing = await fixture((query) => ({ message: answerTo(query, [], { rcode: "SERVFAIL" }) }));
    expect(await digFull(failing.port, "CAA", "example.test")).toContain("status: SERVFAIL");
    const error = await failure(new DnsClient([server(failing.port)]).lookup("example.test", "CAA", limit()));
    expect([error.reason, error.message]).toEqual(["servfail", `the resolver 127.0.0.1:${failing.port} failed to answer CAA example.test (SERVFAIL)`]);
  });

  test("a CNAME loop served by knot is refused, not followed forever", async () => {
    const error = await failure(new DnsClient([server(knot.port)]).lookup("loop1.test", "CAA", limit()));
    expect(error.reason).toBe("cname_loop");
  });

  test("a resolver that never answers fails the lookup at its time limit, after one resend", async () => {
    const silent = await fixture(() => ({ silent: true }));
    const results: string[] = [];
    const error = await failure(new DnsClient([server(silent.port)], { onLookup: ({ result }) => results.push(result) }).lookup("example.test", "CAA", limit(600)));
    expect(error.reason).toBe("timeout");
    expect(results).toEqual(["timeout"]);
    expect(silent.questions()).toEqual([
      { transport: "udp", question: "CAA example.test" },
      { transport: "udp", question: "CAA example.test" },
    ]);
  });

  test("no resolver listed reachable: a closed port fails at once with a network error", async () => {
    const closed = await fixture(() => ({ silent: true }));
    await closed.close();
    fixtures.splice(fixtures.indexOf(closed), 1);
    const error = await failure(new DnsClient([server(closed.port)]).lookup("example.test", "CAA", limit()));
    expect(["network", "timeout"]).toContain(error.reason);
  });
});

withDaemons("hostile resolvers (security)", () => {
  const caa = (name: string, value: string): dnsPacket.Answer => ({ type: "CAA", name, ttl: 60, data: { flags: 0, tag: "issue", value } });

  test("an answer to another question (another name) is ignored as a spoofed datagram would be: no answer in time", async () => {
    const liar = await fixture((query) => ({ message: answerTo(query, [caa("evil.test", "evil.example")], { question: { type: "CAA", name: "evil.test", class: "IN" } }) }));
    expect(await digFull(liar.port, "CAA", "example.test")).toContain("Question section mismatch");
    const error = await failure(new DnsClient([server(liar.port)]).lookup("example.test", "CAA", limit(600)));
    expect(error.reason).toBe("timeout");
  });

  test("records of other names slipped into a right answer are not taken", async () => {
    const slipping = await fixture((query) => ({ message: answerTo(query, [caa("evil.test", "evil.example"), caa("other.example.test", "evil.example")]) }));
    expect(await dig(slipping.port, "CAA", "example.test")).toEqual(['0 issue "evil.example"', '0 issue "evil.example"']);
    const set = await new DnsClient([server(slipping.port)]).lookup("example.test", "CAA", limit());
    expect(set.records).toEqual([]);
  });

  test("an answer with another id is ignored", async () => {
    const wrongId = await fixture((query) => ({ message: answerTo(query, [caa("example.test", "evil.example")], { id: (query.id! + 1) & 0xffff }) }));
    const error = await failure(new DnsClient([server(wrongId.port)]).lookup("example.test", "CAA", limit(600)));
    expect(error.reason).toBe("timeout");
  });

  test(`a flood of records (more than ${MAX_RECORDS}) fails the lookup unread, over UDP and over TCP`, async () => {
    const flood = Array.from({ length: MAX_RECORDS + 50 }, (_, i) => caa("example.test", `ca${i}.example`));
    const flooding = await fixture((query, transport) => ({ message: answerTo(query, transport === "udp" ? flood.slice(0, 20) : flood, { flags: transport === "udp" ? dnsPacket.TRUNCATED_RESPONSE : 0 }) }));
    expect((await dig(flooding.port, "CAA", "example.test")).length).toBe(MAX_RECORDS + 50);
    const asked = flooding.questions().length;
    const error = await failure(new DnsClient([server(flooding.port)]).lookup("example.test", "CAA", limit()));
    expect(error.reason).toBe("too_large");
    expect(flooding.questions().slice(asked).map((q) => q.transport)).toEqual(["udp", "tcp"]);
  });

  test("a datagram larger than any answer to our question fails the lookup", async () => {
    const big = Array.from({ length: 120 }, (_, i) => caa("example.test", `ca${i}-${"y".repeat(40)}.example`));
    const oversized = await fixture((query) => ({ message: answerTo(query, big) }));
    const error = await failure(new DnsClient([server(oversized.port)]).lookup("example.test", "CAA", limit()));
    expect(error.reason).toBe("too_large");
  });

  test("truncated over UDP, then garbage over TCP: the lookup fails as malformed", async () => {
    const garbage = await fixture((query, transport) =>
      transport === "udp" ? { message: answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE }) } : { message: Buffer.concat([answerTo(query, []).subarray(0, 12), Buffer.from([0xc0, 0x0c, 0xff, 0xff])]) },
    );
    const error = await failure(new DnsClient([server(garbage.port)]).lookup("example.test", "CAA", limit()));
    expect(error.reason).toBe("malformed");
  });

  test("a name that points to itself by compression is refused as malformed", async () => {
    const pointing = await fixture((query) => {
      const message = answerTo(query, [caa("example.test", "letsencrypt.org")]);
      // The answer's owner name (just after the question) becomes a pointer to itself.
      const at = 12 + Buffer.byteLength("example.test") + 2 + 4;
      message.writeUInt16BE(0xc000 | at, at);
      return { message };
    });
    const error = await failure(new DnsClient([server(pointing.port)]).lookup("example.test", "CAA", limit()));
    expect(error.reason).toBe("malformed");
  });

  test("a CNAME chain longer than 8 names is cut off", async () => {
    const chain = Array.from({ length: 12 }, (_, i): dnsPacket.Answer => ({ type: "CNAME", name: i === 0 ? "example.test" : `c${i}.test`, ttl: 60, data: `c${i + 1}.test` }));
    const long = await fixture((query) => ({ message: answerTo(query, chain) }));
    const error = await failure(new DnsClient([server(long.port)]).lookup("example.test", "CAA", limit()));
    expect(error.reason).toBe("cname_loop");
  });

  test("a chain of exactly 8 names is followed to its records; a ninth name fails the lookup", async () => {
    const chainOf = (names: number): dnsPacket.Answer[] => [
      ...Array.from({ length: names - 1 }, (_, i): dnsPacket.Answer => ({ type: "CNAME", name: i === 0 ? "example.test" : `c${i}.test`, ttl: 60, data: `c${i + 1}.test` })),
      caa(`c${names - 1}.test`, "letsencrypt.org"),
    ];
    const eight = await fixture((query) => ({ message: answerTo(query, chainOf(8)) }));
    expect(await new DnsClient([server(eight.port)]).lookup("example.test", "CAA", limit())).toMatchObject({ owner: "c7.test", records: [{ value: "letsencrypt.org" }] });
    const nine = await fixture((query) => ({ message: answerTo(query, chainOf(9)) }));
    expect((await failure(new DnsClient([server(nine.port)]).lookup("example.test", "CAA", limit()))).reason).toBe("cname_loop");
  });

  test("after all of that the process still looks names up", async () => {
    expect((await new DnsClient([server(knot.port)]).lookup("example.test", "CAA", limit())).records.length).toBe(2);
  });
});
