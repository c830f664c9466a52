/**
 * A deliberately hostile (or sloppy) CA's ACME directory and renewal-information service over HTTPS
 * on 127.0.0.1, for the ARI tests that script a CA: every request is recorded (method, path with query,
 * headers), and the directory and each answer are whatever the test scripts, byte for byte.
 */
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { chainPem, createLeaf, type Issued } from "./pki.ts";

export interface SeenRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: IncomingMessage["headers"];
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HostileCa {
  origin: string;
  directoryUrl: string;
  seen: SeenRequest[];
  /** What /directory answers: JSON of this object (default: renewalInfo at {origin}/acme/renewal-info). */
  directory(doc: Record<string, unknown> | null): void;
  /** What every other path answers. */
  handle(handler: Handler): void;
  /** Requests other than the directory's. */
  asked(): SeenRequest[];
  close(): Promise<void>;
}

export async function startHostileCa(tlsIssuer: Issued): Promise<HostileCa> {
  const tls = await createLeaf({ issuer: tlsIssuer, dnsNames: ["ca.certkeeper.test"], ipAddresses: ["127.0.0.1"] });
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  let directory: Record<string, unknown> | null = null;
  let handler: Handler = (_req, res) => {
    res.writeHead(404, { "content-type": "application/problem+json" });
    res.end("{}");
  };
  let origin = "";
  const server = https.createServer({ cert: chainPem(tls, tlsIssuer), key: tls.keyPem }, (req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    res.on("error", () => {});
    if (req.url === "/directory") {
      const body = JSON.stringify(directory ?? { newNonce: `${origin}/acme/new-nonce`, newAccount: `${origin}/acme/new-account`, newOrder: `${origin}/acme/new-order`, renewalInfo: `${origin}/acme/renewal-info` });
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
      return res.end(body);
    }
    handler(req, res);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    directoryUrl: `${origin}/directory`,
    seen,
    directory: (doc) => void (directory = doc),
    handle: (h) => void (handler = h),
    asked: () => seen.filter((r) => r.url !== "/directory"),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A JSON answer with these headers. */
export function json(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}
