/**
 * The CLI takes ids or unique names wherever an id is asked for (CONTRACT §23): `channel test --id`,
 * `certificate remove --id` and `key revoke --id` take the record's name when no other record has it.
 * Like ids, names are looked up in every organization unless `--org` names one; a name several
 * records share is refused with their ids.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { DAY } from "../core/base/mod.ts";
import { createHarness, expectData } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { certificateRecord, channelRecord } from "./support/store_conformance/factories.ts";
import { expectFailure, messagesOf, runCli, runCliJson, workspacesRemovedAfterAll, type Workspace } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();
let ws: Workspace;
let receiver: HttpReceiver;
let channelId: string;
let certificateId: string;
let sharedIds: { acme: string; beta: string };
let paddedId: string;
let keys: { member: string; owner: string; test: string };
let cafe: { orgId: string; channelId: string; keyId: string };

beforeAll(async () => {
  ws = workspace();
  receiver = await startHttpReceiver();
  const h = await createHarness({ store: await openLibsqlStore({ url: ws.env.CERTKEEPER_DATABASE_URL! }) });
  channelId = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Ops Hook", config: { url: `${receiver.url}/hook` } } }), 201).id;
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { domain: "shop.example", name: "Shop", notAfter: Date.now() + 60 * DAY });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  certificateId = record.id;
  // A channel name two organizations both use.
  const beta = await h.core.services.admin.createOrganization({ name: "Beta" });
  const config = { url: `${receiver.url}/shared` };
  const acmeShared = channelRecord({ organizationId: h.org.id, mode: "live" }, { name: "Shared Hook", config });
  const betaShared = channelRecord({ organizationId: beta.id, mode: "live" }, { name: "Shared Hook", config });
  for (const channel of [acmeShared, betaShared]) expect(await h.store.channels.insert(channel, { limit: 100 })).toBe(true);
  sharedIds = { acme: acmeShared.id, beta: betaShared.id };
  // A name saved through the API with spaces around it (names are stored as given).
  paddedId = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "  Night Pager ", config: { url: `${receiver.url}/night` } } }), 201).id;
  // The harness's keys: "member key" is one key; "owner key" names a live key and a test key.
  keys = { member: h.keys.member.id, owner: h.keys.owner.id, test: h.keys.test.id };
  // Names with an accent, kept as typed in the composed form (é as one character).
  const cafeOrg = await h.core.services.admin.createOrganization({ name: "Café Ops".normalize("NFC") });
  const cafeChannel = channelRecord({ organizationId: cafeOrg.id, mode: "live" }, { name: "Équipe de garde".normalize("NFC"), config: { url: `${receiver.url}/cafe` } });
  expect(await h.store.channels.insert(cafeChannel, { limit: 100 })).toBe(true);
  const cafeOwner = await h.core.services.admin.createUser({ organizationId: cafeOrg.id, email: "owner@cafe.example", role: "owner" });
  const cafeKey = await h.core.services.admin.createApiKey({ userId: cafeOwner.id, name: "clé de déploiement".normalize("NFC"), mode: "live" });
  cafe = { orgId: cafeOrg.id, channelId: cafeChannel.id, keyId: cafeKey.record.id };
  await h.close();
  ws.env.CERTKEEPER_ALLOW_PRIVATE_TARGETS = "true";
});

afterAll(() => receiver?.close());

test("channel test --id takes the channel's id or its unique name", async () => {
  const byId = await runCli(["channel", "test", "--id", channelId], { env: ws.env });
  expect(byId.code).toBe(0);
  const byName = await runCli(["channel", "test", "--id", "Ops Hook"], { env: ws.env });
  expect({ code: byName.code, stderr: messagesOf(byName.stderr) }).toEqual({ code: 0, stderr: "" });
  expect((await runCliJson(["channel", "test", "--id", "ops hook"], { env: ws.env })).channelId).toBe(channelId);
});

test("a name stored with spaces around it is found by the name, typed with or without them", async () => {
  expect((await runCliJson(["channel", "test", "--id", "Night Pager"], { env: ws.env })).channelId).toBe(paddedId);
  expect((await runCliJson(["channel", "test", "--id", "  night pager "], { env: ws.env })).channelId).toBe(paddedId);
});

test("a name typed in another Unicode form (e and a combining accent, as macOS and many copies give it) finds the same organization, channel and key", async () => {
  const decomposed = (name: string) => name.normalize("NFD");
  expect(decomposed("Café Ops")).not.toBe("Café Ops".normalize("NFC"));
  expect((await runCliJson(["org", "update", "--id", decomposed("café ops"), "--channel-limit", "7"], { env: ws.env })).id).toBe(cafe.orgId);
  expect((await runCliJson(["channel", "test", "--org", decomposed("Café Ops"), "--id", decomposed("Équipe de garde")], { env: ws.env })).channelId).toBe(cafe.channelId);
  expect((await runCliJson(["key", "revoke", "--id", decomposed("Clé de déploiement")], { env: ws.env })).id).toBe(cafe.keyId);
});

test("channel test refuses a name two organizations' channels share, listing their ids; --org picks one", async () => {
  const shared = await runCli(["channel", "test", "--id", "Shared Hook"], { env: ws.env });
  expectFailure(shared, 1, /2 channels are named "Shared Hook": give the id of the one you mean/);
  expect(shared.stderr).toContain(`${sharedIds.acme} (Acme, live)`);
  expect(shared.stderr).toContain(`${sharedIds.beta} (Beta, live)`);
  expect((await runCliJson(["channel", "test", "--id", "Shared Hook", "--org", "Beta"], { env: ws.env })).channelId).toBe(sharedIds.beta);
});

test("with --org, a name never finds another organization's channel", async () => {
  expectFailure(await runCli(["channel", "test", "--id", "Ops Hook", "--org", "Beta"], { env: ws.env }), 1, /No channel with id or name "Ops Hook" in "Beta": see channel list --org ORG/);
  expectFailure(await runCli(["channel", "test", "--id", channelId, "--org", "Beta"], { env: ws.env }), 1, /No channel with id or name/);
});

test("certificate remove --id takes the certificate's unique name", async () => {
  const byName = await runCli(["certificate", "remove", "--id", "Shop"], { env: ws.env });
  expect({ code: byName.code, stderr: messagesOf(byName.stderr) }).toEqual({ code: 0, stderr: "" });
  expect(byName.stdout).toContain(certificateId);
  expectFailure(await runCli(["certificate", "remove", "--id", "Shop"], { env: ws.env }), 1, /No certificate with id or name "Shop": see certificate list --org ORG/);
});

test("key revoke --id takes a key's unique name, and refuses a name two keys share, listing their ids", async () => {
  expect(await runCliJson(["key", "revoke", "--id", "member key"], { env: ws.env })).toEqual({ id: keys.member, revoked: true });
  // Revoked, the key's name no longer names a key to revoke.
  expectFailure(await runCli(["key", "revoke", "--id", "member key"], { env: ws.env }), 1, /No API key with id "member key", nor an unrevoked one with that name/);
  const shared = await runCli(["key", "revoke", "--id", "owner key"], { env: ws.env });
  expectFailure(shared, 1, /2 API keys are named "owner key": give the id of the one you mean/);
  expect(shared.stderr).toContain(`${keys.owner} (Acme, live)`);
  expect(shared.stderr).toContain(`${keys.test} (Acme, test)`);
});
