/**
 * A graceful stop (SIGTERM) writes the API key uses gathered in memory (adapters/elysia/server.ts:
 * stop() flushes them): a key in steady use, whose newest use would otherwise wait for the 30-second
 * flush, shows that use in `key list` after the server stopped.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { runCliJson, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { until } from "./support/until.ts";

setDefaultTimeout(60_000);

const ws = tempWorkspace("certkeeper-key-use-stop-");
const servers: ServeProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  ws.cleanup();
});

test("a key's newest use, made just before SIGTERM, is recorded by the stop", async () => {
  const env = { ...ws.env, CERTKEEPER_CHECK_INTERVAL: "1h" };
  const org = await runCliJson(["org", "create", "--name", "Acme"], { env });
  const user = await runCliJson(["user", "create", "--org", org.id, "--email", "owner@acme.test", "--role", "owner"], { env });
  const key = await runCliJson(["key", "create", "--user", user.id, "--name", "ci"], { env });
  const lastUsed = async () =>
    (await runCliJson(["key", "list", "--org", org.id], { env })).find((item: { id: string }) => item.id === key.id).lastUsedAt as string | null;

  const server = await startServe({ env });
  servers.push(server);
  const use = async () => {
    const answer = await fetch(`${server.url}/v1/certificates`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
  };
  // The first use of a never-used key is written at once.
  await use();
  const first = await until("the first use recorded", lastUsed, 10_000);
  // A later use, recent enough after the recorded one to wait for the regular flush, then a graceful stop.
  await until("a second later", async () => Date.now() >= Date.parse(first) + 1500, 10_000);
  const secondAt = Date.now();
  await use();
  expect(await server.stop("SIGTERM", 15_000)).toBe(0);
  expect(Date.parse((await lastUsed())!)).toBeGreaterThanOrEqual(secondAt - 1000);
  expect(Date.parse((await lastUsed())!)).toBeGreaterThan(Date.parse(first));
});
