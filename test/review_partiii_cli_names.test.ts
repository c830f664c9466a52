/**
 * Review (CONTRACT §23 "CLI for the daily work (all with --json, ids or unique names/emails accepted
 * wherever an id is asked for ...)"): `channel test --id` and `certificate remove --id` take ids only;
 * a unique channel or certificate name is refused as "No channel/certificate with id".
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { DAY } from "../core/base/mod.ts";
import { createHarness, expectData } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { runCli, workspacesRemovedAfterAll, type Workspace } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();
let ws: Workspace;
let receiver: HttpReceiver;
let channelId: string;
let certificateId: string;

beforeAll(async () => {
  ws = workspace();
  receiver = await startHttpReceiver();
  const h = await createHarness({ store: await openLibsqlStore({ url: ws.env.CERTKEEPER_DATABASE_URL! }) });
  channelId = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Ops Hook", config: { url: `${receiver.url}/hook` } } }), 201).id;
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { domain: "shop.example", name: "Shop", notAfter: Date.now() + 60 * DAY });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  certificateId = record.id;
  await h.close();
  ws.env.CERTKEEPER_ALLOW_PRIVATE_TARGETS = "true";
});

afterAll(() => receiver?.close());

test("channel test --id takes the channel's unique name, as --org takes the organization's", async () => {
  const byId = await runCli(["channel", "test", "--id", channelId], { env: ws.env });
  expect(byId.code).toBe(0);
  const byName = await runCli(["channel", "test", "--id", "Ops Hook"], { env: ws.env });
  expect({ code: byName.code, stderr: byName.stderr }).toEqual({ code: 0, stderr: "" });
});

test("certificate remove --id takes the certificate's unique name", async () => {
  const byName = await runCli(["certificate", "remove", "--id", "Shop"], { env: ws.env });
  expect({ code: byName.code, stderr: byName.stderr }).toEqual({ code: 0, stderr: "" });
  expect(byName.stdout).toContain(certificateId);
});
