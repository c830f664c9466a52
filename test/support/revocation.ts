/**
 * Real OCSP answers and CRLs for tests, signed by the test PKI's CAs (test/support/pki.ts), and an
 * HTTP server on 127.0.0.1 that serves them the way CA responders do, or misbehaves on demand.
 */
import { createPrivateKey, sign, createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Certificate as AsnCertificate, CRLReason, Name } from "@peculiar/asn1-x509";
import {
  BasicOCSPResponse,
  CertID,
  CertStatus,
  id_pkix_ocsp_basic,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
} from "@peculiar/asn1-ocsp";
import * as x509 from "@peculiar/x509";
import type { Issued } from "./pki.ts";

const SHA1 = "1.3.14.3.2.26";

export type OcspStatus = { good: true } | { revoked: { at: Date; reason?: number } } | { unknown: true };

export interface OcspAnswerOptions {
  /** The certificate the answer is about. */
  leaf: Issued;
  /** The CA that issued the leaf (the CertID's issuer). */
  issuer: Issued;
  status: OcspStatus;
  /** Who signs: the issuer (default) or a delegated responder certificate, included in the answer. */
  signer?: Issued;
  thisUpdate?: Date;
  /** Null: no nextUpdate. Default: 1 day after thisUpdate. */
  nextUpdate?: Date | null;
  /** Answer about another serial (a lying responder). */
  serial?: string;
  /** Corrupt the signature after signing. */
  breakSignature?: boolean;
  /** More certificates carried in the answer (beside a delegated responder's own). */
  extraCertificates?: Issued[];
}

function keyBits(issued: Issued): Buffer {
  const asn = AsnConvert.parse(issued.cert.rawData, AsnCertificate);
  return Buffer.from(asn.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
}

function subjectDer(issued: Issued): Buffer {
  const asn = AsnConvert.parse(issued.cert.rawData, AsnCertificate);
  return Buffer.from(AsnConvert.serialize(asn.tbsCertificate.subject));
}

function signWith(issued: Issued, data: ArrayBuffer): { algorithm: AlgorithmIdentifier; signature: ArrayBuffer } {
  const ec = issued.keys.privateKey.algorithm.name === "ECDSA";
  const key = createPrivateKey(issued.keyPem);
  const signature = sign("sha256", Buffer.from(data), key);
  const algorithm = ec
    ? new AlgorithmIdentifier({ algorithm: "1.2.840.10045.4.3.2" })
    : new AlgorithmIdentifier({ algorithm: "1.2.840.113549.1.1.11", parameters: null });
  return { algorithm, signature: new Uint8Array(signature).buffer };
}

/** A DER OCSP response, as a CA's responder would produce it. */
export function ocspAnswer(options: OcspAnswerOptions): Uint8Array {
  const signer = options.signer ?? options.issuer;
  const thisUpdate = options.thisUpdate ?? new Date(Date.now() - 60_000);
  const nextUpdate = options.nextUpdate === null ? undefined : (options.nextUpdate ?? new Date(thisUpdate.getTime() + 86_400_000));
  // The serial as the certificate encodes it (x509's serialNumber drops the sign byte of 00 8f…).
  const asn = (options.leaf.cert as unknown as { asn?: { tbsCertificate: { serialNumber: ArrayBuffer } } }).asn;
  const serialHex = options.serial ?? (asn ? Buffer.from(asn.tbsCertificate.serialNumber).toString("hex") : options.leaf.cert.serialNumber);
  const certID = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: SHA1, parameters: null }),
    issuerNameHash: new OctetString(createHash("sha1").update(subjectDer(options.issuer)).digest()),
    issuerKeyHash: new OctetString(createHash("sha1").update(keyBits(options.issuer)).digest()),
    serialNumber: new Uint8Array(Buffer.from(serialHex.length % 2 ? `0${serialHex}` : serialHex, "hex")).buffer,
  });
  const status = options.status;
  const certStatus =
    "good" in status
      ? new CertStatus({ good: null })
      : "revoked" in status
        ? new CertStatus({ revoked: new RevokedInfo({ revocationTime: status.revoked.at, revocationReason: status.revoked.reason === undefined ? undefined : new CRLReason(status.revoked.reason) }) })
        : new CertStatus({ unknown: null });
  const data = new ResponseData({
    responderID: new ResponderID({ byKey: new OctetString(createHash("sha1").update(keyBits(signer)).digest()) }),
    producedAt: new Date(),
    responses: [new SingleResponse({ certID, certStatus, thisUpdate, nextUpdate })],
  });
  const tbs = AsnConvert.serialize(data);
  const { algorithm, signature } = signWith(signer, tbs);
  if (options.breakSignature) new Uint8Array(signature)[10]! ^= 0xff;
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: algorithm,
    signature,
    certs: ((certs) => (certs.length === 0 ? undefined : certs.map((cert) => AsnConvert.parse(cert.cert.rawData, AsnCertificate))))([
      ...(signer === options.issuer ? [] : [signer]),
      ...(options.extraCertificates ?? []),
    ]),
  });
  const response = new OCSPResponse({
    responseStatus: OCSPResponseStatus.successful,
    responseBytes: new ResponseBytes({ responseType: id_pkix_ocsp_basic, response: new OctetString(AsnConvert.serialize(basic)) }),
  });
  return new Uint8Array(AsnConvert.serialize(response));
}

/** An OCSP response with a status other than successful (tryLater, unauthorized, …). */
export function ocspError(status: OCSPResponseStatus): Uint8Array {
  return new Uint8Array(AsnConvert.serialize(new OCSPResponse({ responseStatus: status })));
}

/** The serial (hex) asked about in a DER OCSP request. */
export function requestedSerial(der: Uint8Array): string {
  const request = AsnConvert.parse(der, OCSPRequest);
  return Buffer.from(request.tbsRequest.requestList[0]!.reqCert.serialNumber).toString("hex");
}

export interface CrlOptions {
  issuer: Issued;
  revoked?: Array<{ serial: string; at?: Date; reason?: number }>;
  thisUpdate?: Date;
  nextUpdate?: Date;
  /** Signed by this CA instead of the issuer (a forged CRL); the issuer name stays. */
  signer?: Issued;
}

/** A DER CRL signed by its issuer. */
export async function crl(options: CrlOptions): Promise<Uint8Array> {
  const signer = options.signer ?? options.issuer;
  const ec = signer.keys.privateKey.algorithm.name === "ECDSA";
  const generated = await x509.X509CrlGenerator.create({
    issuer: options.issuer.cert.subject,
    thisUpdate: options.thisUpdate ?? new Date(Date.now() - 60_000),
    nextUpdate: options.nextUpdate ?? new Date(Date.now() + 86_400_000),
    entries: (options.revoked ?? []).map((entry) => ({
      serialNumber: entry.serial,
      revocationDate: entry.at ?? new Date(Date.now() - 3_600_000),
      reason: entry.reason,
    })),
    signingKey: signer.keys.privateKey,
    signingAlgorithm: ec ? { name: "ECDSA", hash: "SHA-256" } : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
  });
  return new Uint8Array(generated.rawData);
}

export interface ResponderRequest {
  method: string;
  path: string;
  body: Uint8Array;
  at: number;
}

export interface ResponderAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /** Send the body one byte every this many ms. */
  trickleMs?: number;
  /** Never answer. */
  hang?: boolean;
}

export interface Responder {
  /** Base URL, e.g. http://127.0.0.1:4567 */
  url: string;
  requests: ResponderRequest[];
  /** How each request is answered; default 404. */
  answer: (request: ResponderRequest) => ResponderAnswer | Promise<ResponderAnswer>;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 (or `host`) answering OCSP and CRL requests as scripted. */
export async function startResponder(options: { host?: string } = {}): Promise<Responder> {
  const responder = { requests: [] as ResponderRequest[], answer: () => ({ status: 404 }) } as unknown as Responder;
  const sockets = new Set<import("node:net").Socket>();
  const timers = new Set<ReturnType<typeof setInterval>>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", async () => {
      const request: ResponderRequest = { method: req.method ?? "", path: req.url ?? "", body: Buffer.concat(chunks), at: Date.now() };
      responder.requests.push(request);
      const answer = await responder.answer(request);
      if (answer.hang) return;
      const body = typeof answer.body === "string" ? Buffer.from(answer.body) : Buffer.from(answer.body ?? new Uint8Array());
      // An empty content-length header asks for a chunked body of unannounced length.
      const headers: Record<string, string> = { "content-length": String(body.length), ...answer.headers };
      if (headers["content-length"] === "") delete headers["content-length"];
      res.writeHead(answer.status ?? 200, headers);
      if (!answer.trickleMs) return res.end(body);
      let sent = 0;
      const timer = setInterval(() => {
        if (sent >= body.length || res.destroyed) {
          clearInterval(timer);
          timers.delete(timer);
          return res.end();
        }
        res.write(body.subarray(sent, ++sent));
      }, answer.trickleMs);
      timers.add(timer);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  responder.url = `http://${options.host ?? "127.0.0.1"}:${port}`;
  responder.close = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return responder;
}

export { OCSPResponseStatus, Name };
