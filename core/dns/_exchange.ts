/**
 * One DNS question to one resolver, on the wire: over UDP, and again over TCP when the answer comes
 * back truncated. Messages are encoded and decoded by dns-packet (the codec under multicast-dns and
 * bonjour: widely used, one small dependency, it knows CAA, TLSA and TXT and refuses compression
 * pointers that do not point back); what is checked here is what a hostile or broken resolver could
 * get wrong: the id, the question echoed, the size, the record counts.
 */
import dgram from "node:dgram";
import net from "node:net";
import { randomInt } from "node:crypto";
import * as dnsPacket from "dns-packet";
import type { DnsServer } from "../config/dns_settings.ts";

/** Why a lookup gave no answer; `reason` is what the lookup counter and the logs show. */
export class DnsFailure extends Error {
  constructor(
    readonly reason: "timeout" | "servfail" | "refused" | "malformed" | "network" | "too_large" | "cname_loop",
    message: string,
  ) {
    super(message);
    this.name = "DnsFailure";
  }
}

/** The record types certkeeper asks for. */
export type DnsQuestionType = "CAA" | "TLSA" | "TXT" | "CNAME";

export interface DnsAnswerMessage {
  rcode: "NOERROR" | "NXDOMAIN";
  /** The AD bit: the resolver validated the answer with DNSSEC. */
  authenticated: boolean;
  answers: dnsPacket.Answer[];
}

/** Payload size advertised over UDP (the DNS flag day 2020 value): larger answers come truncated, then over TCP. */
export const UDP_PAYLOAD = 1232;
/** A datagram larger than this was not sent in answer to a question advertising UDP_PAYLOAD. */
const MAX_DATAGRAM = 4096;
/** Over TCP a message is at most 65,535 bytes by its length prefix; nothing more is read. */
const MAX_TCP_MESSAGE = 65_535;
/** Records in one answer (all sections); a real CAA, TLSA or TXT set has a handful. */
export const MAX_RECORDS = 200;

export interface ExchangeOptions {
  server: DnsServer;
  name: string;
  type: DnsQuestionType;
  /** This resolver's share of the lookup's time (UDP and TCP together). */
  timeoutMs: number;
  /** The lookup's own limit: aborting it ends the exchange at once. */
  signal: AbortSignal;
}

/** Asks `server` once over UDP (resent once at half time), and over TCP when the answer is truncated. */
export async function exchange(options: ExchangeOptions): Promise<DnsAnswerMessage> {
  const id = randomInt(0, 0x10000);
  const query = dnsPacket.encode({
    type: "query",
    id,
    // AD asks a validating resolver to say whether it validated (RFC 6840 §5.7), without the weight of DO's signatures.
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.AUTHENTIC_DATA,
    questions: [{ type: options.type, name: options.name, class: "IN" }],
    additionals: [{ type: "OPT", name: ".", udpPayloadSize: UDP_PAYLOAD, flags: 0 } as dnsPacket.Answer],
  });
  const controller = new AbortController();
  const stop = () => controller.abort();
  const timer = setTimeout(stop, options.timeoutMs);
  options.signal.addEventListener("abort", stop, { once: true });
  if (options.signal.aborted) stop();
  const started = performance.now();
  try {
    const attempt = { ...options, signal: controller.signal };
    const udp = await udpExchange(query, id, attempt, Math.max(50, options.timeoutMs / 2));
    if (!udp.truncated) return udp.message;
    if (performance.now() - started >= options.timeoutMs) throw abortFailure(options);
    return await tcpExchange(query, id, attempt);
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", stop);
  }
}

function where({ address, port }: DnsServer): string {
  return net.isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
}

type Judged = { ignore: true } | { ignore: false; truncated: boolean; message: DnsAnswerMessage };

/**
 * Reads one message from `server`: a message that is not the answer to our question (another id, not
 * a response, another question) is ignored over UDP, as a spoofed datagram would be; anything
 * malformed, oversized or over-full fails the lookup.
 */
function judge(bytes: Buffer, id: number, options: ExchangeOptions): Judged {
  if (bytes.length < 12) throw new DnsFailure("malformed", `the resolver ${where(options.server)} sent ${bytes.length} bytes, too short for a DNS message`);
  if (bytes.readUInt16BE(0) !== id || (bytes[2]! & 0x80) === 0) return { ignore: true };
  const records = bytes.readUInt16BE(6) + bytes.readUInt16BE(8) + bytes.readUInt16BE(10);
  if (records > MAX_RECORDS) {
    throw new DnsFailure("too_large", `the resolver ${where(options.server)} answered ${options.type} ${options.name} with ${records} records, more than the ${MAX_RECORDS} read`);
  }
  let decoded: dnsPacket.DecodedPacket;
  try {
    decoded = dnsPacket.decode(bytes);
  } catch (error) {
    throw new DnsFailure("malformed", `the resolver ${where(options.server)} sent an answer that cannot be decoded (${(error as Error).message})`);
  }
  const question = decoded.questions?.[0];
  if (decoded.questions?.length !== 1 || !question || question.type !== options.type || question.name.toLowerCase() !== options.name.toLowerCase()) {
    return { ignore: true };
  }
  const rcode = (decoded as { rcode?: string }).rcode ?? "NOERROR";
  if (rcode === "SERVFAIL") throw new DnsFailure("servfail", `the resolver ${where(options.server)} failed to answer ${options.type} ${options.name} (SERVFAIL)`);
  if (rcode === "REFUSED") throw new DnsFailure("refused", `the resolver ${where(options.server)} refused to answer ${options.type} ${options.name}`);
  if (rcode !== "NOERROR" && rcode !== "NXDOMAIN") {
    throw new DnsFailure("servfail", `the resolver ${where(options.server)} answered ${options.type} ${options.name} with ${rcode}`);
  }
  // A referral (no answer, NS records where a NODATA answer carries its SOA, neither recursion available
  // nor an authoritative answer) is a server that does not resolve this name: no answer at all, not
  // "no records here" (RFC 2308, section 2.2).
  const authorities = decoded.authorities ?? [];
  if (rcode === "NOERROR" && (decoded.answers ?? []).length === 0 && !decoded.flag_ra && !decoded.flag_aa && authorities.some((r) => r.type === "NS") && !authorities.some((r) => r.type === "SOA")) {
    throw new DnsFailure("servfail", `the resolver ${where(options.server)} answered ${options.type} ${options.name} with a referral, not an answer (it does not resolve for certkeeper)`);
  }
  return {
    ignore: false,
    truncated: decoded.flag_tc,
    message: { rcode, authenticated: decoded.flag_ad, answers: decoded.answers ?? [] },
  };
}

function abortFailure(options: ExchangeOptions): DnsFailure {
  return new DnsFailure("timeout", `the resolver ${where(options.server)} did not answer ${options.type} ${options.name} in time`);
}

function udpExchange(
  query: Buffer,
  id: number,
  options: ExchangeOptions,
  resendAfterMs: number,
): Promise<{ truncated: boolean; message: DnsAnswerMessage }> {
  const { server, signal } = options;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortFailure(options));
    const socket = dgram.createSocket(net.isIPv6(server.address) ? "udp6" : "udp4");
    let resend: ReturnType<typeof setTimeout> | undefined;
    let done = false;
    const settle = (outcome: { error: Error } | { value: { truncated: boolean; message: DnsAnswerMessage } }) => {
      if (done) return;
      done = true;
      clearTimeout(resend);
      signal.removeEventListener("abort", onAbort);
      socket.removeAllListeners("message");
      socket.on("error", () => {});
      try {
        socket.close();
      } catch {}
      if ("error" in outcome) reject(outcome.error);
      else resolve(outcome.value);
    };
    const onAbort = () => settle({ error: abortFailure(options) });
    signal.addEventListener("abort", onAbort, { once: true });
    socket.on("error", (error: NodeJS.ErrnoException) =>
      settle({ error: new DnsFailure("network", `the resolver ${where(server)} could not be reached (${error.code ?? error.message})`) }),
    );
    socket.on("message", (bytes, from) => {
      // Only the resolver asked may answer (the socket is connected, but be explicit).
      if (from.port !== server.port) return;
      if (bytes.length > MAX_DATAGRAM) {
        return settle({ error: new DnsFailure("too_large", `the resolver ${where(server)} sent a ${bytes.length}-byte datagram, more than the ${MAX_DATAGRAM} read`) });
      }
      try {
        const judged = judge(bytes, id, options);
        if (!judged.ignore) settle({ value: { truncated: judged.truncated, message: judged.message } });
      } catch (error) {
        settle({ error: error as Error });
      }
    });
    socket.connect(server.port, server.address, () => {
      if (signal.aborted) return;
      socket.send(query);
      // One resend at half time: a lost datagram costs half the time limit, not all of it.
      resend = setTimeout(() => {
        if (!done) socket.send(query, () => {});
      }, resendAfterMs);
    });
  });
}

function tcpExchange(query: Buffer, id: number, options: ExchangeOptions): Promise<DnsAnswerMessage> {
  const { server, signal } = options;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortFailure(options));
    const socket = net.connect({ host: server.address, port: server.port });
    const chunks: Buffer[] = [];
    let read = 0;
    let expected: number | null = null;
    let done = false;
    const settle = (outcome: { error: Error } | { value: DnsAnswerMessage }) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      socket.removeAllListeners("data");
      socket.on("error", () => {});
      socket.destroy();
      if ("error" in outcome) reject(outcome.error);
      else resolve(outcome.value);
    };
    const onAbort = () => settle({ error: abortFailure(options) });
    signal.addEventListener("abort", onAbort, { once: true });
    socket.on("error", (error: NodeJS.ErrnoException) =>
      settle({ error: new DnsFailure("network", `the resolver ${where(server)} could not be reached over TCP (${error.code ?? error.message})`) }),
    );
    socket.on("close", () => settle({ error: new DnsFailure("network", `the resolver ${where(server)} closed the TCP connection before its answer was complete`) }));
    socket.on("connect", () => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(query.length);
      socket.write(Buffer.concat([prefix, query]));
    });
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      read += chunk.length;
      if (read > MAX_TCP_MESSAGE + 2) {
        return settle({ error: new DnsFailure("too_large", `the resolver ${where(server)} sent more than one ${MAX_TCP_MESSAGE}-byte message over TCP`) });
      }
      const bytes = Buffer.concat(chunks);
      if (expected === null && bytes.length >= 2) expected = bytes.readUInt16BE(0);
      if (expected === null || bytes.length < 2 + expected) return;
      try {
        const judged = judge(bytes.subarray(2, 2 + expected), id, options);
        // Over TCP nobody else can slip a message in: one that is not our answer is a broken resolver.
        if (judged.ignore) throw new DnsFailure("malformed", `the resolver ${where(server)} answered another question over TCP`);
        settle({ value: judged.message });
      } catch (error) {
        settle({ error: error as Error });
      }
    });
  });
}
