/**
 * Webhook receivers in a process of their own for the delivery benchmark: `--healthy N` HTTP servers
 * that answer 200 at once and record when each request arrived, and `--holes N` black holes that
 * accept connections and never answer. Prints `{ healthy: [ports], holes: [ports] }` as one JSON line;
 * `GET /received` on a healthy port answers `[{ path, webhookId, at }]` (at: ms since the epoch);
 * `GET /holes` there answers how many connections the black holes hold open right now.
 */
import http from "node:http";
import net from "node:net";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { healthy: { type: "string", default: "1" }, holes: { type: "string", default: "1" } } });

const listen = (server: net.Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", 1024, () => resolve((server.address() as net.AddressInfo).port)));

/** Connections the black holes hold open. */
let holding = 0;

const healthy: number[] = [];
for (let i = 0; i < Number(values.healthy); i++) {
  const received: Array<{ path: string; webhookId: string; at: number }> = [];
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/received") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(received));
      return;
    }
    if (req.method === "GET" && req.url === "/holes") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(holding));
      return;
    }
    req.resume();
    req.on("end", () => {
      received.push({ path: req.url ?? "", webhookId: String(req.headers["webhook-id"] ?? ""), at: Date.now() });
      res.writeHead(200);
      res.end();
    });
  });
  server.keepAliveTimeout = 30_000;
  healthy.push(await listen(server));
}

const holes: number[] = [];
for (let i = 0; i < Number(values.holes); i++) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket); // accepted, read never, answered never
    holding++;
    socket.on("error", () => {});
    socket.on("close", () => {
      sockets.delete(socket);
      holding--;
    });
  });
  holes.push(await listen(server));
}

console.log(JSON.stringify({ healthy, holes }));
