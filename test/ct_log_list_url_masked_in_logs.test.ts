/**
 * CERTKEEPER_CT_LOG_LIST may be an https URL carrying a credential (a private mirror's `?token=`): the
 * start-up settings line masks it (CONTRACT §23: "credentials masked"), and §10 says a log never holds a
 * key, a password or a token. When the list cannot be read, the follower's warning must mask it too.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { refusedPort } from "./support/servers.ts";
import { startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";

setDefaultTimeout(60_000);
const LIST_TOKEN = "l1st-t0ken-n0t-for-logs";
const LIST_PASSWORD = "l1st-passw0rd";
const ws = tempWorkspace("certkeeper-ct-list-secret-");
let serve: ServeProcess | undefined;
afterAll(async () => {
  await serve?.stop("SIGKILL");
  ws.cleanup();
});

test("a CT log list that cannot be read is logged without the token or password of its URL", async () => {
  const list = `https://reader:${LIST_PASSWORD}@127.0.0.1:${await refusedPort()}/log_list.json?token=${LIST_TOKEN}`;
  serve = await startServe({
    env: { ...ws.env, CERTKEEPER_LOG_LEVEL: "info", CERTKEEPER_CT_SOURCE: "logs", CERTKEEPER_CT_LOG_LIST: list, CERTKEEPER_DNS_SERVERS: "off" },
    cwd: ws.dir,
  });
  const deadline = Date.now() + 10_000;
  while (!serve.output().stdout.includes("could not read the CT log list") && Date.now() < deadline) await Bun.sleep(50);
  expect(await serve.stop("SIGTERM", 10_000)).toBe(0);
  const { stdout, stderr } = serve.output();
  const warning = stdout.split("\n").find((line) => line.includes("could not read the CT log list"));
  expect(warning).toBeDefined();
  // The settings line at start masks it already.
  expect(stdout).toContain("token=********");
  for (const secret of [LIST_TOKEN, LIST_PASSWORD]) {
    expect(stdout.split("\n").filter((line) => line.includes(secret))).toEqual([]);
    expect(stderr).not.toContain(secret);
  }
});
