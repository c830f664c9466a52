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
}

function listen(server: net.Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port));
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

/** A TLS server presenting `cert` (PEM: the leaf, then any intermediates it sends). */
export async function startTlsServer(options: { cert: string; key: string; port?: number }): Promise<TlsTestServer> {
  let context = { cert: options.cert, key: options.key };
  const server = tls.createServer({ ...context, SNICallback: (_name, cb) => cb(null, tls.createSecureContext(context)) }, (socket) => {
    socket.on("error", () => {});
    socket.end();
  });
  server.on("tlsClientError", () => {});
  const { sockets, connections } = track(server);
  const port = await listen(server, options.port);
  return {
    port,
    connections,
    close: closer(server, sockets),
    setCertificate(cert, key) {
      context = { cert, key };
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
export async function refusedPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
