/**
 * A CA's ACME Renewal Information service (RFC 9773) over HTTPS on a loopback address: a directory
 * whose `renewalInfo` names the service, and `GET {renewalInfo}/{certID}` answering RenewalInfo
 * objects (RFC 9773 §4.2: `suggestedWindow` with RFC 3339 `start` and `end`, optional `explanationURL`,
 * `Retry-After`), 404 for a certID it does not know. Each certID's answer is scripted, and so is
 * misbehaviour: a trickle, a hang, a flood of bytes, a redirect, garbage.
 */
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { AsnConvert } from "@peculiar/asn1-schema";
import { AuthorityKeyIdentifier, Certificate as AsnCertificate, id_ce_authorityKeyIdentifier } from "@peculiar/asn1-x509";
import { chainPem, createLeaf, type Issued } from "./pki.ts";

export type AriBehaviour =
  | { kind: "window"; start: number; end: number; explanationUrl?: string; retryAfter?: string | null }
  /** Sends the answer one byte every `everyMs`. */
  | { kind: "trickle"; everyMs: number }
  /** Accepts the request and never answers. */
  | { kind: "hang" }
  /** Streams `bytes` of JSON-looking garbage. */
  | { kind: "flood"; bytes: number }
  | { kind: "redirect"; location: string }
  | { kind: "status"; status: number; body?: string; retryAfter?: string }
  | { kind: "raw"; contentType: string; body: string; retryAfter?: string };

export interface AriRequest {
  path: string;
  certId: string | null;
  at: number;
}

export interface AriServer {
  /** The ACME directory URL (configure it in CERTKEEPER_ACME_DIRECTORIES). */
  directoryUrl: string;
  /** The renewalInfo base URL the directory names. */
  renewalInfoUrl: string;
  requests: AriRequest[];
  /** Scripts the answer for a leaf (by its certID); a leaf without one is answered 404. */
  answer(certId: string, behaviour: AriBehaviour): void;
  /** What the directory answers instead of the RFC 8555 directory (a CA without ARI, garbage, …); null: the directory again. */
  directory(body: string | null, status?: number): void;
  close(): Promise<void>;
}

/** RFC 3339, as a CA writes it. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The certID of an issued test certificate, as RFC 9773 §4.1 defines it, computed here from the DER
 * on its own (not with certkeeper's code): base64url of the AKI keyIdentifier, ".", base64url of the
 * serial's content octets.
 */
export function certIdOf(issued: Issued): string {
  const cert = AsnConvert.parse(issued.cert.rawData, AsnCertificate);
  const aki = cert.tbsCertificate.extensions!.find((e) => e.extnID === id_ce_authorityKeyIdentifier)!;
  const keyId = AsnConvert.parse(aki.extnValue.buffer, AuthorityKeyIdentifier).keyIdentifier!;
  const b64 = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString("base64url");
  return `${b64(keyId.buffer)}.${b64(cert.tbsCertificate.serialNumber)}`;
}

export async function startAriServer(options: { tlsIssuer: Issued; host?: string }): Promise<AriServer> {
  const host = options.host ?? "127.0.0.1";
  const tls = await createLeaf({ issuer: options.tlsIssuer, dnsNames: ["ari.certkeeper.test"], ipAddresses: [host] });
  const answers = new Map<string, AriBehaviour>();
  const requests: AriRequest[] = [];
  const sockets = new Set<Socket>();
  let directoryOverride: { body: string; status: number } | null = null;
  let base = "";

  const server = https.createServer({ cert: chainPem(tls, options.tlsIssuer), key: tls.keyPem }, (req, res) => {
    const path = new URL(req.url ?? "/", "https://x").pathname;
    const match = /^\/acme\/renewal-info\/([^/]+)$/.exec(path);
    requests.push({ path, certId: match ? decodeURIComponent(match[1]!) : null, at: Date.now() });
    if (req.method !== "GET") return send(res, 405, "application/problem+json", problem("malformed", "Method not allowed"));
    if (path === "/acme/directory") {
      if (directoryOverride) return send(res, directoryOverride.status, "application/json", directoryOverride.body);
      return send(res, 200, "application/json", JSON.stringify(directoryDocument(base)));
    }
    if (!match) return send(res, 404, "application/problem+json", problem("malformed", "No such resource"));
    const behaviour = answers.get(match[1]!);
    if (!behaviour) return send(res, 404, "application/problem+json", problem("malformed", "Unknown certificate"));
    switch (behaviour.kind) {
      case "window": {
        const body = JSON.stringify({
          suggestedWindow: { start: rfc3339(behaviour.start), end: rfc3339(behaviour.end) },
          ...(behaviour.explanationUrl ? { explanationURL: behaviour.explanationUrl } : {}),
        });
        const retry = behaviour.retryAfter === undefined ? "21600" : behaviour.retryAfter;
        return send(res, 200, "application/json", body, retry === null ? {} : { "retry-after": retry });
      }
      case "status":
        return send(res, behaviour.status, "application/json", behaviour.body ?? "", behaviour.retryAfter ? { "retry-after": behaviour.retryAfter } : {});
      case "raw":
        return send(res, 200, behaviour.contentType, behaviour.body, behaviour.retryAfter ? { "retry-after": behaviour.retryAfter } : {});
      case "redirect":
        res.writeHead(302, { location: behaviour.location, "content-length": "0" });
        return res.end();
      case "hang":
        return; // never answers; closed with the server
      case "trickle": {
        const body = Buffer.from(JSON.stringify({ suggestedWindow: { start: rfc3339(Date.now()), end: rfc3339(Date.now() + 86_400_000) } }));
        res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
        let i = 0;
        const timer = setInterval(() => {
          if (i >= body.length || res.destroyed) {
            clearInterval(timer);
            return res.end();
          }
          res.write(body.subarray(i, ++i));
        }, behaviour.everyMs);
        res.on("close", () => clearInterval(timer));
        return;
      }
      case "flood": {
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = Buffer.alloc(64 * 1024, '{"suggestedWindow":'.repeat(1));
        let sent = 0;
        const pump = () => {
          while (sent < behaviour.bytes && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("error", () => {});
        return pump();
      }
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  base = `${origin}/acme`;
  return {
    directoryUrl: `${base}/directory`,
    renewalInfoUrl: `${base}/renewal-info`,
    requests,
    answer: (certId, behaviour) => void answers.set(certId, behaviour),
    directory: (body, status = 200) => void (directoryOverride = body === null ? null : { body, status }),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An RFC 8555 directory with RFC 9773's `renewalInfo`. */
function directoryDocument(base: string): Record<string, unknown> {
  return {
    newNonce: `${base}/new-nonce`,
    newAccount: `${base}/new-account`,
    newOrder: `${base}/new-order`,
    revokeCert: `${base}/revoke-cert`,
    keyChange: `${base}/key-change`,
    renewalInfo: `${base}/renewal-info`,
    meta: { termsOfService: `${base}/terms` },
  };
}

function problem(type: string, detail: string): string {
  return JSON.stringify({ type: `urn:ietf:params:acme:error:${type}`, detail });
}

function send(res: import("node:http").ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": contentType, "content-length": String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}
