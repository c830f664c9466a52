/**
 * certkeeper's DNS client (CONTRACT §22) against resolvers that misbehave in ways the daemon tests do
 * not reach: a datagram that is a query rather than a response, answers with rcodes other than
 * NOERROR/NXDOMAIN, truncation answered over TCP by another question, a second resolver behind a
 * silent one, CNAME chains an unvalidated step breaks. In-process fixture servers on loopback; no
 * daemon needed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import dgram from "node:dgram";
import net from "node:net";
import * as dnsPacket from "dns-packet";
import { DnsClient, DnsFailure } from "../core/dns/mod.ts";
import { deadline } from "../core/net/mod.ts";
import { answerTo, freePort, startFixtureDns, type FixtureDnsServer } from "./support/dns_servers.ts";

const fixtures: FixtureDnsServer[] = [];
const sockets: dgram.Socket[] = [];
const tcpServers: net.Server[] = [];
const server = (port: number) => ({ address: "127.0.0.1", port });
const limit = (ms = 2000) => deadline(ms);
const caa = (name: string, value: string): dnsPacket.Answer => ({ type: "CAA", name, ttl: 60, data: { flags: 0, tag: "issue", value } });

async function fixture(reply: Parameters<typeof startFixtureDns>[0]): Promise<FixtureDnsServer> {
  const started = await startFixtureDns(reply);
  fixtures.push(started);
  return started;
}

/** A UDP server that sends each of `datagrams(query bytes, decoded query)` back, in order. */
async function udpFixture(datagrams: (bytes: Buffer, query: dnsPacket.DecodedPacket) => Buffer[]): Promise<number> {
  const port = await freePort();
  const socket = dgram.createSocket("udp4");
  socket.on("error", () => {});
  socket.on("message", (bytes, from) => {
    for (const datagram of datagrams(bytes, dnsPacket.decode(bytes))) socket.send(datagram, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(port, "127.0.0.1", () => resolve()));
  sockets.push(socket);
  return port;
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

afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.close()));
  for (const socket of sockets) socket.close();
  for (const tcp of tcpServers) tcp.close();
});

/**
 * A resolver whose UDP answers are truncated and whose TCP answer (length prefix and message) is sent
 * in two writes split `tail` bytes before its end, the second a moment later, as a slow link delivers it.
 */
async function tricklingTcp(answer: (query: dnsPacket.DecodedPacket) => Buffer, tail: number): Promise<number> {
  const port = await udpFixture((_bytes, query) => [answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE })]);
  const tcp = net.createServer((socket) => {
    socket.on("error", () => {});
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2 || buffered.length < 2 + buffered.readUInt16BE(0)) return;
      const message = answer(dnsPacket.decode(buffered.subarray(2, 2 + buffered.readUInt16BE(0))));
      const framed = Buffer.concat([Buffer.from([message.length >> 8, message.length & 0xff]), message]);
      socket.write(framed.subarray(0, framed.length - tail));
      setTimeout(() => socket.write(framed.subarray(framed.length - tail)), 50);
    });
  });
  await new Promise<void>((resolve) => tcp.listen(port, "127.0.0.1", () => resolve()));
  tcpServers.push(tcp);
  return port;
}

describe("messages that are not the answer", () => {
  test("a datagram echoing the query itself (QR bit clear) is no answer: the real answer after it is the one read", async () => {
    const port = await udpFixture((bytes, query) => [bytes, answerTo(query, [caa("example.test", "letsencrypt.org")])]);
    const set = await new DnsClient([server(port)]).lookup<{ value: string }>("example.test", "CAA", limit());
    expect(set.records.map((r) => r.value)).toEqual(["letsencrypt.org"]);
  });

  test("an answer echoing the same name but another question type is ignored as not ours: no answer in time", async () => {
    const otherType = await fixture((query) => ({ message: answerTo(query, [caa("example.test", "evil.example")], { question: { type: "TXT", name: "example.test", class: "IN" } }) }));
    const error = await failure(new DnsClient([server(otherType.port)]).lookup("example.test", "CAA", limit(600)));
    expect(error.reason).toBe("timeout");
  });

  test("an answer with an rcode other than NOERROR and NXDOMAIN (NOTIMP, FORMERR) is a failed lookup, not an empty set", async () => {
    for (const rcode of [4, 1]) {
      const port = await udpFixture((_bytes, query) => {
        const message = answerTo(query, []);
        message.writeUInt16BE((message.readUInt16BE(2) & 0xfff0) | rcode, 2);
        return [message];
      });
      const results: string[] = [];
      const error = await failure(new DnsClient([server(port)], { onLookup: ({ result }) => results.push(result) }).lookup("example.test", "CAA", limit()));
      expect([rcode, error.reason, results]).toEqual([rcode, "servfail", ["error"]]);
    }
  });

  test("truncated over UDP, then over TCP the answer to another question: the lookup fails at once as malformed, not at its time limit", async () => {
    const other = await fixture((query, transport) =>
      transport === "udp"
        ? { message: answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE }) }
        : { message: answerTo(query, [caa("evil.test", ";")], { question: { type: "CAA", name: "evil.test", class: "IN" } }) },
    );
    const started = performance.now();
    const error = await failure(new DnsClient([server(other.port)]).lookup("example.test", "CAA", limit(3000)));
    expect(error.reason).toBe("malformed");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test("a truncated answer is never taken as it is: the records come from TCP", async () => {
    const split = await fixture((query, transport) =>
      transport === "udp"
        ? { message: answerTo(query, [caa("example.test", "partial.example")], { flags: dnsPacket.TRUNCATED_RESPONSE }) }
        : { message: answerTo(query, [caa("example.test", "letsencrypt.org"), caa("example.test", "pki.goog")]) },
    );
    const set = await new DnsClient([server(split.port)]).lookup<{ value: string }>("example.test", "CAA", limit());
    expect(set.records.map((r) => r.value).sort()).toEqual(["letsencrypt.org", "pki.goog"]);
    expect(split.questions().map((q) => q.transport)).toEqual(["udp", "tcp"]);
  });
});

describe("empty answers that are not referrals (RFC 2308 §2.2)", () => {
  const emptyWith = (query: dnsPacket.DecodedPacket, flags: number, authorities: dnsPacket.Answer[]) =>
    dnsPacket.encode({ type: "response", id: query.id, flags, questions: [query.questions![0]!], answers: [], authorities });
  const ns: dnsPacket.Answer = { type: "NS", name: "test", ttl: 60, data: "ns.test" };
  const soa: dnsPacket.Answer = {
    type: "SOA",
    name: "test",
    ttl: 60,
    data: { mname: "ns.test", rname: "hostmaster.test", serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 },
  };

  test("a recursive resolver's empty answer (RA set) with NS records in authority is no data, not a referral", async () => {
    const port = await udpFixture((_bytes, query) => [emptyWith(query, dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE, [ns])]);
    expect((await new DnsClient([server(port)]).lookup("example.test", "CAA", limit())).records).toEqual([]);
  });

  test("an empty answer carrying the zone's SOA beside its NS records is no data (NODATA), not a referral", async () => {
    const port = await udpFixture((_bytes, query) => [emptyWith(query, 0, [ns, soa])]);
    expect((await new DnsClient([server(port)]).lookup("example.test", "CAA", limit())).records).toEqual([]);
  });

  test("NS records alone, neither RA nor AA, no SOA: a referral, the lookup fails", async () => {
    const port = await udpFixture((_bytes, query) => [emptyWith(query, 0, [ns])]);
    expect((await failure(new DnsClient([server(port)]).lookup("example.test", "CAA", limit()))).reason).toBe("servfail");
  });
});

describe("TCP answers that arrive in pieces", () => {
  test("an answer whose last bytes come in a later segment is read whole, not judged at its length prefix's count less two", async () => {
    for (const tail of [1, 2, 3]) {
      const port = await tricklingTcp((query) => answerTo(query, [caa("example.test", "letsencrypt.org"), caa("example.test", "pki.goog")]), tail);
      const set = await new DnsClient([server(port)]).lookup<{ value: string }>("example.test", "CAA", limit());
      expect({ tail, values: set.records.map((r) => r.value).sort() }).toEqual({ tail, values: ["letsencrypt.org", "pki.goog"] });
    }
  });
});

describe("several resolvers", () => {
  test("a silent first resolver costs its share of the time, not all of it: the second one is asked and answers", async () => {
    const silent = await fixture(() => ({ silent: true }));
    const answering = await fixture((query) => ({ message: answerTo(query, [caa("example.test", "letsencrypt.org")]) }));
    const results: string[] = [];
    const client = new DnsClient([server(silent.port), server(answering.port)], { onLookup: ({ result }) => results.push(result) });
    const set = await client.lookup("example.test", "CAA", limit(1500));
    expect(set.records.length).toBe(1);
    expect(results).toEqual(["timeout", "ok"]);
  });
});

describe("the AD bit across a CNAME chain", () => {
  /** Answers with the AD bit only for names in `validated`; `alias.test` is a CNAME to `target.test`, whose answers are asked on their own. */
  const chainServer = (validated: string[]) =>
    fixture((query) => {
      const { name, type } = query.questions![0]!;
      const flags = validated.includes(name) ? dnsPacket.AUTHENTIC_DATA : 0;
      if (name === "alias.test") return { message: answerTo(query, [{ type: "CNAME", name, ttl: 60, data: "target.test" }], { flags }) };
      if (name === "target.test" && type === "CAA") return { message: answerTo(query, [caa("target.test", "letsencrypt.org")], { flags }) };
      if (name === "_25._tcp.target.test" && type === "TLSA") return { message: answerTo(query, [], { flags }) };
      return { message: answerTo(query, [], { flags }) };
    });

  test("lookup(): an unvalidated alias step makes the whole answer unvalidated, even when its target's answer is validated", async () => {
    const dns = await chainServer(["target.test"]);
    const set = await new DnsClient([server(dns.port)]).lookup("alias.test", "CAA", limit());
    expect([set.owner, set.records.length, set.authenticated]).toEqual(["target.test", 1, false]);
    const both = await chainServer(["alias.test", "target.test"]);
    expect((await new DnsClient([server(both.port)]).lookup("alias.test", "CAA", limit())).authenticated).toBe(true);
  });

  test("expandAlias(): validated only when every step was", async () => {
    const dns = await chainServer(["target.test"]);
    expect(await new DnsClient([server(dns.port)]).expandAlias("alias.test", limit())).toEqual({ target: "target.test", authenticated: false });
    const both = await chainServer(["alias.test", "target.test"]);
    expect(await new DnsClient([server(both.port)]).expandAlias("alias.test", limit())).toEqual({ target: "target.test", authenticated: true });
  });
});

describe("lookups the check no longer needs", () => {
  test("a lookup dropped before its time limit (the check ended) counts as no outcome: neither timeout nor error", async () => {
    let asked!: () => void;
    const question = new Promise<void>((resolve) => (asked = resolve));
    const silent = await fixture(() => {
      asked();
      return { silent: true };
    });
    const results: string[] = [];
    const controller = new AbortController();
    const lookup = new DnsClient([server(silent.port)], { onLookup: ({ result }) => results.push(result) }).lookup("example.test", "CAA", {
      signal: controller.signal,
      dueAt: performance.now() + 5000,
      clear: () => {},
    });
    await question;
    controller.abort();
    expect((await failure(lookup)).reason).toBe("timeout");
    expect(results).toEqual([]);
  });
});

describe("names CNAMEs point to", () => {
  test("a CNAME to a name that is no host name (a space, a slash) fails the lookup as malformed", async () => {
    const odd = await fixture((query) => ({ message: answerTo(query, [{ type: "CNAME", name: "example.test", ttl: 60, data: "evil name/x.test" }]) }));
    expect((await failure(new DnsClient([server(odd.port)]).lookup("example.test", "CAA", limit()))).reason).toBe("malformed");
  });
});
