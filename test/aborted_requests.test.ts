/**
 * A client that hangs up in the middle of its request body is the client's doing: a real server
 * process logs it at info at most, never as an error, and keeps serving.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import net from "node:net";
import { startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { seedOwner } from "./support/accounts.ts";

setDefaultTimeout(30_000);
const ws = tempWorkspace("certkeeper-abort-");
afterAll(() => ws.cleanup());

/** Sends the head and part of a body of `path`, then closes the connection. */
function hangUpMidBody(url: string, key: string, path: string, type = "application/json"): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nOrigin: ${url}\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${type}\r\n` +
          `Content-Length: 5000\r\n\r\n{"domain": "exam`,
      );
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 200);
    });
    socket.on("error", reject);
  });
}

test("a client hanging up mid-body is not logged as an error, and the server goes on answering", async () => {
  const env = { ...ws.env, CERTKEEPER_LOG_LEVEL: "debug" };
  const { key } = await seedOwner(ws.env.CERTKEEPER_DATABASE_URL!);
  const server = await startServe({ env });
  try {
    for (const path of ["/v1/certificates", "/v1/channels"]) await hangUpMidBody(server.url, key, path);
    await hangUpMidBody(server.url, key, "/sign-in", "application/x-www-form-urlencoded");
    // The server has seen all three when their request lines are out.
    const deadline = Date.now() + 10_000;
    while (postLines(server).length < 3 && Date.now() < deadline) await Bun.sleep(20);
    const response = await fetch(`${server.url}/v1/certificates`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
  } finally {
    expect(await server.stop()).toBe(0);
  }
  const lines = logLines(server);
  expect(lines.filter((line) => line.level === "error" || line.level === "warn")).toEqual([]);
  // Each cut-short request still has its request line, at info.
  const cut = postLines(server);
  expect(cut.map((line) => ({ level: line.level, path: line.path, status: line.status }))).toEqual([
    { level: "info", path: "/v1/certificates", status: 400 },
    { level: "info", path: "/v1/channels", status: 400 },
    // The settings area refuses a form it could not read whole, as any form not from its own page.
    { level: "info", path: "/sign-in", status: 403 },
  ]);
});

/** The server's log lines written whole so far. */
function logLines(server: ServeProcess): any[] {
  const { stdout } = server.output();
  return stdout
    .slice(0, stdout.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

function postLines(server: ServeProcess): any[] {
  return logLines(server).filter((line) => line.msg === "request" && line.method === "POST");
}
