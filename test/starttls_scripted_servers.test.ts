/**
 * STARTTLS against scripted servers (CONTRACT §12). RFC 6120: XMPP servers that answer but do not
 * offer or refuse the upgrade give `statusReason: "starttls_refused"`; a server offering STARTTLS in
 * namespace-correct XML is upgraded. RFC 5321, RFC 959: a long multi-line SMTP or FTP banner (many
 * short lines) is read while each line fits in 8 KiB and the exchange in 64 KiB; past that it is cut
 * off (`tls_error`, docs/watching.md). Observed through POST /v1/certificates and POST
 * /v1/certificates/{id}/check: each certificate is added while its server upgrades normally, then the
 * server changes behaviour.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { startStarttlsServer, type Session } from "./support/starttls_servers.ts";

const TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls";
const HEADER = `<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='r1' from='${TEST_DOMAIN}' version='1.0' xml:lang='en'>`;
const closers: Array<() => Promise<void> | void> = [];
let h: Harness;
let chain: { cert: string; key: string };

type Script = (s: Session) => Promise<void>;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`] });
  chain = { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem };
  h = await createHarness();
});
afterAll(async () => {
  for (const close of closers) await close();
  await h.close();
});

/** A plain-text server running `current.script` on each connection (changeable between checks). */
async function scriptedServer(first: Script): Promise<{ port: number; current: { script: Script } }> {
  const current = { script: first };
  const server = await startStarttlsServer("smtp", { ...chain, script: () => current.script });
  closers.push(() => server.close());
  return { port: server.port, current };
}

/** RFC 6120 §5.4: features offering STARTTLS, `<starttls/>`, `<proceed/>`, TLS. */
const upgrading: Script = async (s) => {
  await s.read((t) => t.includes("<stream:stream"));
  s.write(`${HEADER}<stream:features><starttls xmlns='${TLS_NS}'><required/></starttls></stream:features>`);
  await s.read((t) => t.includes("<starttls"));
  s.write(`<proceed xmlns='${TLS_NS}'/>`);
  s.upgrade();
};

/** Adds the certificate with an upgrading server, switches the server to `then`, checks again. */
async function checkAfter(name: string, then: Script): Promise<{ status: string; statusReason: string | null; endpointReason: string | null }> {
  const server = await scriptedServer(upgrading);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `${name}.${TEST_DOMAIN}`, port: server.port, protocol: "xmpp" } }), 201);
  server.current.script = then;
  const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
  return { status: checked.status, statusReason: checked.statusReason, endpointReason: checked.endpoints[0].statusReason };
}

const REFUSED = { status: "unreachable", statusReason: "starttls_refused", endpointReason: "starttls_refused" };

test("a stream error in answer to <starttls/>, then the stream closed (RFC 6120 §4.9): starttls_refused", async () => {
  const result = await checkAfter("xmpp-error-close", async (s) => {
    await s.read((t) => t.includes("<stream:stream"));
    s.write(`${HEADER}<stream:features><starttls xmlns='${TLS_NS}'/></stream:features>`);
    await s.read((t) => t.includes("<starttls"));
    s.socket.end(`<stream:error><policy-violation xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error></stream:stream>`);
  });
  expect(result).toEqual(REFUSED);
});

test("a stream error in answer to <starttls/>, the TCP connection left open: starttls_refused, not a timeout", async () => {
  const result = await checkAfter("xmpp-error-open", async (s) => {
    await s.read((t) => t.includes("<stream:stream"));
    s.write(`${HEADER}<stream:features><starttls xmlns='${TLS_NS}'/></stream:features>`);
    await s.read((t) => t.includes("<starttls"));
    s.write(`<stream:error><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error></stream:stream>`);
  });
  expect(result).toEqual(REFUSED);
});

test("a server answering with a pre-1.0 stream (no version attribute, RFC 6120 §4.7.5: no features, no STARTTLS): starttls_refused, not a timeout", async () => {
  const result = await checkAfter("xmpp-09", async (s) => {
    await s.read((t) => t.includes("<stream:stream"));
    s.write(`<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='r2' from='${TEST_DOMAIN}'>`);
  });
  expect(result).toEqual(REFUSED);
});

test("STARTTLS offered and accepted with a namespace prefix (same XML element, Namespaces in XML): the certificate is read", async () => {
  const result = await checkAfter("xmpp-prefix", async (s) => {
    await s.read((t) => t.includes("<stream:stream"));
    s.write(`${HEADER}<stream:features><tls:starttls xmlns:tls='${TLS_NS}'><tls:required/></tls:starttls></stream:features>`);
    await s.read((t) => t.includes("<starttls"));
    s.write(`<tls:proceed xmlns:tls='${TLS_NS}'/>`);
    s.upgrade();
  });
  expect(result).toEqual({ status: "valid", statusReason: null, endpointReason: null });
});

const line = (t: string) => t.includes("\n");
/** 20 KiB of continuation lines of one reply (each line short), then its last line. */
const longReply = (code: number) => `${code}-${"x".repeat(76)}\r\n`.repeat(256) + `${code} ready\r\n`;

const smtp = (greeting: string): Script => async (s) => {
  s.write(greeting);
  await s.read(line);
  s.write("250-mx.test\r\n250 STARTTLS\r\n");
  await s.read(line);
  s.write("220 2.0.0 go ahead\r\n");
  s.upgrade();
};
const ftp = (greeting: string): Script => async (s) => {
  s.write(greeting);
  await s.read(line);
  s.write("234 AUTH TLS ok\r\n");
  s.upgrade();
};

async function checkProtocolAfter(name: string, protocol: string, first: Script, then: Script) {
  const server = await scriptedServer(first);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `${name}.${TEST_DOMAIN}`, port: server.port, protocol } }), 201);
  server.current.script = then;
  const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
  return { status: checked.status, statusReason: checked.statusReason, endpointReason: checked.endpoints[0].statusReason };
}

const READ = { status: "valid", statusReason: null, endpointReason: null };
const CUT_OFF = { status: "unreachable", statusReason: "tls_error", endpointReason: "tls_error" };
const hugeReply = (code: number) => `${code}-${"x".repeat(76)}\r\n`.repeat(900) + `${code} ready\r\n`;

test("smtp: a 20 KiB multi-line 220 greeting upgrades; a 70 KiB one is cut off", async () => {
  expect(longReply(220).length).toBeGreaterThan(20 * 1024);
  expect(await checkProtocolAfter("smtp-long", "smtp", smtp("220 mx.test ESMTP\r\n"), smtp(longReply(220)))).toEqual(READ);
  expect(await checkProtocolAfter("smtp-huge", "smtp", smtp("220 mx.test ESMTP\r\n"), smtp(hugeReply(220)))).toEqual(CUT_OFF);
});

test("ftp: a 20 KiB multi-line 220 greeting upgrades; a 70 KiB one is cut off", async () => {
  expect(await checkProtocolAfter("ftp-long", "ftp", ftp("220 ready\r\n"), ftp(longReply(220)))).toEqual(READ);
  expect(await checkProtocolAfter("ftp-huge", "ftp", ftp("220 ready\r\n"), ftp(hugeReply(220)))).toEqual(CUT_OFF);
});
