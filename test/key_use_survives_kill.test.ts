/**
 * An API key's use survives a server killed right after it. `lastUsedAt` may lag by up to 60 s: uses
 * are gathered in memory and written every 30 s, and a use of a key whose last recorded use is older
 * than 45 s is written within a second. A key used once and then a crash (SIGKILL, the OOM killer, a
 * container stopped hard) used to show "never used" for ever, the key an operator cleaning up unused
 * keys would revoke.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { Admin } from "../core/accounts/admin.ts";
import { Authenticator, USE_RECORDED_WITHIN_MS } from "../core/auth/authenticate.ts";
import { systemClock } from "../core/base/time.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { runCliJson, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";

setDefaultTimeout(60_000);

const ws = tempWorkspace("certkeeper-key-use-kill-");
const servers: ServeProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  ws.cleanup();
});

test("a key used once, then the server killed two seconds later: key list shows the use", async () => {
  const env = { ...ws.env, CERTKEEPER_CHECK_INTERVAL: "1h" };
  const org = await runCliJson(["org", "create", "--name", "Acme"], { env });
  const user = await runCliJson(["user", "create", "--org", org.id, "--email", "owner@acme.test", "--role", "owner"], { env });
  const key = await runCliJson(["key", "create", "--user", user.id, "--name", "ci"], { env });

  const server = await startServe({ env });
  servers.push(server);
  const usedAt = Date.now();
  const answer = await fetch(`${server.url}/v1/certificates`, { headers: { authorization: `Bearer ${key.key}` } });
  expect(answer.status).toBe(200);
  await answer.arrayBuffer();
  await Bun.sleep(2000);
  expect(await server.stop("SIGKILL")).not.toBe(0);

  const listed = await runCliJson(["key", "list", "--org", org.id], { env });
  const shown = listed.find((item: { id: string }) => item.id === key.id);
  expect(shown.lastUsedAt).not.toBeNull();
  expect(Date.parse(shown.lastUsedAt)).toBeGreaterThanOrEqual(usedAt - 1000);
});

test("only a key whose last recorded use is old asks for an early write: keys in steady use wait for the regular flush", async () => {
  const store = createMemoryStore();
  const admin = new Admin(store, systemClock);
  const org = await admin.createOrganization({ name: "Acme", plan: "pro" });
  const user = await admin.createUser({ organizationId: org.id, email: "owner@acme.test", role: "owner" });
  const { key } = await admin.createApiKey({ userId: user.id, name: "ci", mode: "live" });
  let asked = 0;
  const authenticator = new Authenticator(store, { onStale: () => asked++ });
  const t = Date.now();
  await authenticator.authenticate(`Bearer ${key}`, t);
  expect(asked).toBe(1); // never used before
  await authenticator.flushUsage();
  await authenticator.authenticate(`Bearer ${key}`, t + 10_000);
  await authenticator.authenticate(`Bearer ${key}`, t + USE_RECORDED_WITHIN_MS);
  expect(asked).toBe(1); // recorded at t: recent enough
  await authenticator.authenticate(`Bearer ${key}`, t + USE_RECORDED_WITHIN_MS + 1);
  expect(asked).toBe(2);
  await authenticator.flushUsage();
  await authenticator.authenticate(`Bearer ${key}`, t + USE_RECORDED_WITHIN_MS + 2);
  expect(asked).toBe(2);
});
