/**
 * A Certificate Transparency search service on 127.0.0.1 speaking Cert Spotter's issuances API as
 * SSLMate documents it (`GET /v1/issuances?domain=&include_subdomains=&match_wildcards=&after=&expand=`,
 * a JSON array of issuance objects in discovery order, `after` taking the last `id`), over real
 * certificates of the test PKI. It can demand a token, rate-limit (429 + Retry-After) or fail (500).
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate as AsnCertificate, Extensions, TBSCertificate } from "@peculiar/asn1-x509";
import type { Issued } from "./pki.ts";

export interface CtRequest {
  path: string;
  params: URLSearchParams;
  authorization: string | undefined;
}

export interface CtServer {
  url: string;
  requests: CtRequest[];
  /** Logs an issuance of `leaf` (signed by `issuer`); precertificateOnly leaves cert_sha256 out. */
  log(leaf: Issued, issuer: Issued, options?: { friendlyName?: string; precertificateOnly?: boolean }): string;
  /** Issuances per page (default 2, so paging is exercised). */
  pageSize: number;
  /** When set, requests without `Authorization: Bearer <token>` get 401. */
  token: string | null;
  /** When true, the service misbehaves: it ignores `after` and answers every request from the start. */
  ignoreAfter: boolean;
  /** Answers the next `count` requests with this status (and Retry-After when given). */
  fail(status: number, count: number, retryAfter?: string): void;
  close(): Promise<void>;
}

const sha256 = (data: BufferSource) => createHash("sha256").update(new Uint8Array(data as ArrayBuffer)).digest("hex");

export async function startCtServer(): Promise<CtServer> {
  const issuances: Array<Record<string, unknown> & { id: string; dns_names: string[] }> = [];
  let nextId = 1_000_000;
  let failures: Array<{ status: number; retryAfter?: string }> = [];
  const server = {} as CtServer;
  server.requests = [];
  server.pageSize = 2;
  server.token = null;
  server.ignoreAfter = false;
  server.fail = (status, count, retryAfter) => {
    failures = [...failures, ...Array.from({ length: count }, () => ({ status, retryAfter }))];
  };
  server.log = (leaf, issuer, options = {}) => {
    const asn = AsnConvert.parse(leaf.cert.rawData, AsnCertificate);
    const id = String(nextId++ * 7); // opaque, increasing
    issuances.push({
      id,
      tbs_sha256: tbsSha256(asn.tbsCertificate),
      cert_sha256: options.precertificateOnly ? undefined : sha256(leaf.cert.rawData),
      dns_names: leaf.cert
        .getExtension("2.5.29.17")
        ? (leaf.cert.getExtension("2.5.29.17") as unknown as { names: { items: Array<{ type: string; value: string }> } }).names.items
            .filter((name) => name.type === "dns")
            .map((name) => name.value)
        : [],
      pubkey_sha256: sha256(leaf.cert.publicKey.rawData),
      issuer: {
        friendly_name: options.friendlyName ?? issuer.cert.subjectName.getField("O")[0] ?? null,
        website: null,
        caa_domains: [],
        operator: { name: issuer.cert.subjectName.getField("O")[0] ?? "Test operator", website: null },
        pubkey_sha256: sha256(issuer.cert.publicKey.rawData),
        name: issuer.cert.subject,
      },
      not_before: leaf.cert.notBefore.toISOString().replace(/\.\d+Z$/, "Z"),
      not_after: leaf.cert.notAfter.toISOString().replace(/\.\d+Z$/, "Z"),
      revoked: false,
    });
    return id;
  };

  const matches = (names: string[], domain: string, subdomains: boolean) =>
    names.some((name) => name === domain || (subdomains && name.endsWith(`.${domain}`)));

  const httpServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://ct.test");
    server.requests.push({ path: url.pathname, params: url.searchParams, authorization: req.headers.authorization });
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== "/v1/issuances" || req.method !== "GET") return send(404, { code: "not_found", message: "Not found" });
    if (server.token && req.headers.authorization !== `Bearer ${server.token}`) {
      return send(401, { code: "unauthorized", message: "Invalid API key" });
    }
    const failure = failures.shift();
    if (failure) {
      return send(failure.status, { code: failure.status === 429 ? "rate_limited" : "internal_error", message: "scripted failure" }, failure.retryAfter ? { "retry-after": failure.retryAfter } : {});
    }
    const domain = url.searchParams.get("domain");
    if (!domain) return send(400, { code: "bad_request", message: "domain is required" });
    const subdomains = url.searchParams.get("include_subdomains") === "true";
    const expand = url.searchParams.getAll("expand");
    const after = server.ignoreAfter ? null : url.searchParams.get("after");
    const start = after ? issuances.findIndex((issuance) => issuance.id === after) + 1 : 0;
    if (after && start === 0) return send(400, { code: "bad_request", message: "unknown after" });
    const page = issuances
      .slice(start)
      .filter((issuance) => matches(issuance.dns_names, domain, subdomains))
      .slice(0, server.pageSize)
      .map((issuance) => {
        const { dns_names, issuer, cert_sha256, ...rest } = issuance;
        return {
          ...rest,
          ...(cert_sha256 ? { cert_sha256 } : {}),
          ...(expand.includes("dns_names") ? { dns_names } : {}),
          ...(expand.includes("issuer") ? { issuer } : {}),
        };
      });
    send(200, page);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  server.url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  server.close = () =>
    new Promise<void>((resolve) => {
      httpServer.closeAllConnections();
      httpServer.close(() => resolve());
    });
  return server;
}

/** CT's poison extension and SCT list extension (RFC 6962 §3.1, §3.3). */
const CT_EXTENSIONS = new Set(["1.3.6.1.4.1.11129.2.4.3", "1.3.6.1.4.1.11129.2.4.2"]);

/**
 * Cert Spotter's `tbs_sha256`: the SHA-256 of the TBSCertificate as RFC 6962 §3.2 defines it, without
 * the poison and SCT-list extensions (a certificate and its precertificate have the same), re-encoded.
 */
function tbsSha256(tbs: TBSCertificate): string {
  const kept = (tbs.extensions ?? []).filter((extension) => !CT_EXTENSIONS.has(extension.extnID));
  const stripped = new TBSCertificate({ ...tbs, extensions: kept.length > 0 ? new Extensions(kept) : undefined });
  return sha256(AsnConvert.serialize(stripped));
}
