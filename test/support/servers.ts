/** Real servers on 127.0.0.1 for tests: TLS with any chain, silent, plain TCP, refused ports. */
import net from "node:net";
import tls from "node:tls";

export interface TestServer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export interface TlsTestServer extends TestServer {
  /** Serves another certificate from now on (a renewal). */
  setCertificate(cert: string, key: string): void;
  /** The SNI name of every handshake so far ("" for none). */
  servernames(): string[];
}

function listen(server: net.Server, port = 0, host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });
}

function closer(server: net.Server, sockets: Set<net.Socket>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
}

function track(server: net.Server) {
  const sockets = new Set<net.Socket>();
  let count = 0;
  server.on("connection", (socket) => {
    count++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  return { sockets, connections: () => count };
}

export interface TlsServerOptions {
  cert: string;
  key: string;
  port?: number;
  /** Listen address (any loopback address); default 127.0.0.1. */
  host?: string;
  /** Protocol versions the server accepts, e.g. both "TLSv1" for a server that speaks only TLS 1.0. */
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
}

/** A TLS server presenting `cert` (PEM: the leaf, then any intermediates it sends). */
export async function startTlsServer(options: TlsServerOptions): Promise<TlsTestServer> {
  const versions = { ...(options.minVersion && { minVersion: options.minVersion }), ...(options.maxVersion && { maxVersion: options.maxVersion }) };
  let context: tls.SecureContextOptions = { cert: options.cert, key: options.key, ...versions };
  const names: string[] = [];
  const server = tls.createServer({ ...context, SNICallback: (name, cb) => (names.push(name), cb(null, tls.createSecureContext(context))) }, (socket) => {
    socket.on("error", () => {});
    socket.end();
  });
  server.on("tlsClientError", () => {});
  const { sockets, connections } = track(server);
  const port = await listen(server, options.port, options.host);
  return {
    port,
    connections,
    close: closer(server, sockets),
    servernames: () => [...names],
    setCertificate(cert, key) {
      context = { cert, key, ...versions };
      // Handshakes without SNI get the server's default context: swap that too.
      server.setSecureContext(context);
    },
  };
}

/** Accepts connections and never answers: a check against it must end at the TLS timeout. */
export async function startSilentServer(): Promise<TestServer> {
  const server = net.createServer(() => {});
  const { sockets, connections } = track(server);
  return { port: await listen(server), connections, close: closer(server, sockets) };
}

/** Speaks plain text instead of TLS (a web server on the wrong port). */
export async function startPlainServer(): Promise<TestServer> {
  const server = net.createServer((socket) => {
    socket.once("data", () => socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"));
  });
  const { sockets, connections } = track(server);
  return { port: await listen(server), connections, close: closer(server, sockets) };
}

/** A port on 127.0.0.1 with nothing listening: connections to it are refused. */
export function refusedPort(): Promise<number> {
  return unusedPort();
}

/**
 * A TCP port of 127.0.0.1 free now, for a server to listen on later, or for nothing to listen on.
 * Below the ephemeral range (32768 and up on Linux), where every test server listening on port 0
 * lands: a port freed there could be taken by another test's server before it is used (the suite runs
 * files side by side). Nothing listens on a fixed port down here.
 */
export async function unusedPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = net.createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (!free) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
}

export interface DelayingFront extends TestServer {
  /**
   * The most connections held in their delay at once so far: retrievals started together. (Open
   * connections would overcount: a finished one's close may be seen after the next one's accept.)
   */
  mostAtOnce(): number;
}

/**
 * A TCP front that holds each connection `delayMs` before piping it to `targetPort` (a TLS server
 * behind it answers as itself): retrievals through it take at least that long, and it counts how
 * many run at once.
 */
export async function startDelayingFront(targetPort: number, delayMs: number): Promise<DelayingFront> {
  let waiting = 0;
  let most = 0;
  const server = net.createServer((socket) => {
    waiting++;
    most = Math.max(most, waiting);
    let released = false;
    const release = () => {
      if (!released) waiting--;
      released = true;
    };
    socket.on("close", release);
    // Read (and hold) what the client sends meanwhile, so a client that goes away is seen at once.
    const held: Buffer[] = [];
    const hold = (chunk: Buffer) => held.push(chunk);
    socket.on("data", hold);
    const timer = setTimeout(() => {
      release();
      const upstream = net.connect(targetPort, "127.0.0.1");
      upstream.on("error", () => socket.destroy());
      socket.on("close", () => upstream.destroy());
      upstream.on("close", () => socket.destroy());
      socket.off("data", hold);
      for (const chunk of held) upstream.write(chunk);
      socket.pipe(upstream).pipe(socket);
    }, delayMs);
    socket.on("close", () => clearTimeout(timer));
  });
  const { sockets, connections } = track(server);
  return { port: await listen(server), connections, mostAtOnce: () => most, close: closer(server, sockets) };
}
