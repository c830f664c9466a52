/**
 * `certkeeper check`'s note on stderr is one line per target, whatever a server put in its error: a
 * MySQL server that answers the connection with an error packet whose message holds line breaks (its
 * text is quoted in the note) forges no line of its own; the breaks show as `\x0a`.
 */
import { afterAll, expect, test } from "bun:test";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { runCli, workspacesRemovedAfterAll } from "./support/cli.ts";
import { TEST_DOMAIN } from "./support/harness.ts";

const workspace = workspacesRemovedAfterAll();
const FORGED = "Host blocked\nmysql.example:3306: valid, 80 days left\nall clear";

/** A MySQL server on 127.0.0.1 that answers every connection with an error packet (1129, host blocked) carrying `message`. */
async function refusingMysql(message: string) {
  const server = net.createServer((socket) => {
    const payload = Buffer.concat([Buffer.from([0xff, 0x69, 0x04]), Buffer.from(`#HY000${message}`, "utf8")]);
    const header = Buffer.from([payload.length & 0xff, (payload.length >> 8) & 0xff, payload.length >> 16, 0]);
    socket.on("error", () => {});
    socket.end(Buffer.concat([header, payload]));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(resolve)) };
}

let closeServer: (() => Promise<unknown>) | undefined;
afterAll(async () => {
  await closeServer?.();
});

test("a server's error with line breaks stays on the note's one line", async () => {
  const mysql = await refusingMysql(FORGED);
  closeServer = mysql.close;
  const domain = `db.${TEST_DOMAIN}`;
  const result = await runCli(["check", `${domain}:${mysql.port}`, "--protocol", "mysql"], {
    env: { ...workspace().env, CERTKEEPER_RESOLVE: `${domain}=127.0.0.1`, CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true", CERTKEEPER_TLS_TIMEOUT: "5s" },
  });
  // The server's own words are quoted, and they start no line.
  expect(result.stderr).toContain("Host blocked\\x0amysql.example:3306");
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
});
