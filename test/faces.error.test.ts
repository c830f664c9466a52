/**
 * One pipeline, three faces: the HTTP API, the embedding API and the settings area answer the same bad
 * input with the same error (status, code), because all three call core's runOperation. Each case is
 * sent through every face and the answers are compared.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createCertkeeper, CertkeeperApiError, type Certkeeper } from "../adapters/embed/mod.ts";
import { EMBED_NAMES } from "../adapters/embed/_functions.ts";
import { CertkeeperError, type Role, type UserRecord } from "../core/base/mod.ts";
import { OPERATIONS, type Operation } from "../core/operations/mod.ts";
import { createHarness, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { signedInUser } from "./support/web_users.ts";

interface Case {
  name: string;
  operation: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  expected: [status: number, code: string];
}

const MISSING_CERTIFICATE = "cert_0000000000000000missing";
const MISSING_CHANNEL = "ch_00000000000000000missing";

const CASES: Case[] = [
  { name: "a domain with a scheme", operation: "addCertificate", body: { domain: "https://a.com/" }, expected: [400, "invalid_domain"] },
  { name: "no domain", operation: "addCertificate", body: {}, expected: [400, "invalid_domain"] },
  { name: "port 0", operation: "addCertificate", body: { domain: `a.${TEST_DOMAIN}`, port: 0 }, expected: [400, "invalid_request"] },
  { name: "a port as a string", operation: "addCertificate", body: { domain: `a.${TEST_DOMAIN}`, port: "443" }, expected: [400, "invalid_request"] },
  { name: "an unknown field", operation: "addCertificate", body: { domain: `a.${TEST_DOMAIN}`, owner: "me" }, expected: [400, "invalid_request"] },
  { name: "a body that is not an object", operation: "addCertificate", body: ["a.com"], expected: [400, "invalid_request"] },
  { name: "limit 0", operation: "listCertificates", query: { limit: "0" }, expected: [400, "invalid_request"] },
  { name: "limit 101", operation: "listCertificates", query: { limit: "101" }, expected: [400, "invalid_request"] },
  { name: "limit ten", operation: "listCertificates", query: { limit: "ten" }, expected: [400, "invalid_request"] },
  { name: "an unknown status", operation: "listCertificates", query: { status: "valid,broken" }, expected: [400, "invalid_request"] },
  { name: "a bad cursor", operation: "listCertificates", query: { cursor: "garbage" }, expected: [400, "invalid_request"] },
  { name: "an unknown query parameter", operation: "listCertificates", query: { sort: "domain" }, expected: [400, "invalid_request"] },
  // The summary takes no input to get wrong (the embed function takes no argument; HTTP refuses an unknown query parameter, see certificates_summary.test.ts).
  { name: "the summary, which takes no input", operation: "summarizeCertificates", expected: [200, "(none)"] },
  { name: "a query parameter where none is taken", operation: "listEvents", query: { status: "valid" }, expected: [400, "invalid_request"] },
  { name: "a missing certificate", operation: "getCertificate", params: { id: MISSING_CERTIFICATE }, expected: [404, "certificate_not_found"] },
  { name: "an id that is no certificate id", operation: "getCertificate", params: { id: "nonsense" }, expected: [404, "certificate_not_found"] },
  { name: "a check of a missing certificate", operation: "checkCertificate", params: { id: MISSING_CERTIFICATE }, expected: [404, "certificate_not_found"] },
  { name: "an empty name, before existence", operation: "patchCertificate", params: { id: MISSING_CERTIFICATE }, body: { name: "" }, expected: [400, "invalid_request"] },
  { name: "a patch of nothing", operation: "patchCertificate", params: { id: MISSING_CERTIFICATE }, body: {}, expected: [400, "invalid_request"] },
  { name: "a removal of a missing certificate", operation: "deleteCertificate", params: { id: MISSING_CERTIFICATE }, expected: [404, "certificate_not_found"] },
  { name: "an unknown channel type", operation: "addChannel", body: { type: "pager", name: "x", config: {} }, expected: [400, "invalid_channel_type"] },
  { name: "an email channel without an address", operation: "addChannel", body: { type: "email", name: "x", config: {} }, expected: [400, "invalid_config"] },
  { name: "a webhook of another scheme", operation: "addChannel", body: { type: "webhook", name: "x", config: { url: "ftp://a.com/" } }, expected: [400, "invalid_webhook_url"] },
  { name: "a channel without a name", operation: "addChannel", body: { type: "email", config: { email: "a@b.co" } }, expected: [400, "invalid_request"] },
  { name: "a channel list of 1000", operation: "listChannels", query: { limit: "1000" }, expected: [400, "invalid_request"] },
  { name: "a removal of a missing channel", operation: "deleteChannel", params: { id: MISSING_CHANNEL }, expected: [404, "channel_not_found"] },
  { name: "a missing channel", operation: "getChannel", params: { id: MISSING_CHANNEL }, expected: [404, "channel_not_found"] },
  { name: "a test of a missing channel", operation: "testChannel", params: { id: MISSING_CHANNEL }, expected: [404, "channel_not_found"] },
  { name: "a patch of a channel with nothing", operation: "patchChannel", params: { id: MISSING_CHANNEL }, body: {}, expected: [400, "invalid_request"] },
  { name: "a watch of a wildcard", operation: "addWatch", body: { domain: "*.a.com" }, expected: [400, "invalid_domain"] },
  { name: "a watch with 21 issuers", operation: "addWatch", body: { domain: "a.com", allowedIssuers: Array.from({ length: 21 }, (_, i) => `CA ${i}`) }, expected: [400, "invalid_request"] },
  { name: "a watch list with a bad cursor", operation: "listWatches", query: { cursor: "garbage" }, expected: [400, "invalid_request"] },
  { name: "a missing watch", operation: "getWatch", params: { id: "wch_0000000000000000missing" }, expected: [404, "watch_not_found"] },
  { name: "a patch of a watch's domain", operation: "patchWatch", params: { id: "wch_0000000000000000missing" }, body: { domain: "b.com" }, expected: [400, "invalid_request"] },
  { name: "a removal of a missing watch", operation: "deleteWatch", params: { id: "wch_0000000000000000missing" }, expected: [404, "watch_not_found"] },
  { name: "a poll of a missing watch", operation: "pollWatch", params: { id: "wch_0000000000000000missing" }, expected: [404, "watch_not_found"] },
  { name: "a bad tag filter", operation: "listCertificates", query: { tag: "Team A" }, expected: [400, "invalid_request"] },
  { name: "a tag with a space", operation: "patchCertificate", params: { id: MISSING_CERTIFICATE }, body: { tags: ["a b"] }, expected: [400, "invalid_request"] },
  { name: "a filter of an unknown event kind", operation: "addChannel", body: { type: "email", name: "x", config: { email: "a@b.co" }, filter: { events: ["nope"] } }, expected: [400, "invalid_request"] },
  { name: "an import of no items", operation: "createImport", body: { certificates: [] }, expected: [400, "invalid_request"] },
  { name: "an import of strings", operation: "createImport", body: { certificates: ["a.com"] }, expected: [400, "invalid_request"] },
  { name: "a missing import", operation: "getImport", params: { id: "imp_0000000000000000missing" }, expected: [404, "import_not_found"] },
  // Like the summary: no input to get wrong (HTTP refuses a query parameter, as for every operation without one).
  { name: "the CT log list, which takes no input", operation: "listCtLogs", expected: [200, "(none)"] },
];

let h: Harness;
let ck: Certkeeper;

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords });
  ck = await createCertkeeper({ database: h.store, organization: { id: h.org.id }, config: h.config });
});

afterAll(async () => {
  await ck?.close();
  await h?.close();
});

function operation(id: string): Operation {
  return OPERATIONS.find((op) => op.id === id)!;
}

type Answer = [status: number, code: string];

async function viaHttp(c: Case, key: string): Promise<Answer> {
  const op = operation(c.operation);
  const path = op.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(c.params?.[name] ?? ""));
  const query = c.query ? `?${new URLSearchParams(c.query)}` : "";
  const answer = await h.request(op.method, `${path}${query}`, { key, body: op.body ? c.body : undefined });
  return [answer.status, answer.body?.error?.code ?? "(none)"];
}

async function viaEmbed(c: Case): Promise<Answer> {
  const op = operation(c.operation);
  const [namespace, method] = EMBED_NAMES[op.id as keyof typeof EMBED_NAMES].split(".") as [string, string];
  const args: unknown[] = [];
  for (const name of Object.keys(op.params?.properties ?? {})) args.push(c.params?.[name]);
  if (op.body) args.push(c.body);
  if (Object.keys(op.query.properties ?? {}).length > 0 || c.query) args.push(c.query);
  try {
    await (ck as unknown as Record<string, Record<string, (...a: unknown[]) => Promise<unknown>>>)[namespace]![method]!(...args);
    return [200, "(none)"];
  } catch (error) {
    if (!(error instanceof CertkeeperApiError)) throw error;
    return [error.status, error.code];
  }
}

async function viaSettings(c: Case, user: UserRecord): Promise<Answer> {
  const op = operation(c.operation);
  const workspace = h.core.accounts.workspace.as({ user, organization: h.org }, "live");
  try {
    await workspace.invoke(op, { params: c.params, query: c.query, body: c.body });
    return [200, "(none)"];
  } catch (error) {
    if (!(error instanceof CertkeeperError)) throw error;
    return [error.status, error.code === "certificate_unreachable" ? "certificate_not_found" : error.code];
  }
}

async function user(role: Role): Promise<UserRecord> {
  return h.core.services.admin.createUser({ organizationId: h.org.id, email: `${role}-${crypto.randomUUID()}@acme.test`, role });
}

describe("the same bad input, through the HTTP API, the embedding API and the settings area", () => {
  for (const c of CASES) {
    test(`${c.name} (${c.operation}): ${c.expected.join(" ")} from every face`, async () => {
      const owner = await user("owner");
      const answers = {
        http: await viaHttp(c, h.keys.owner.key),
        embed: await viaEmbed(c),
        settings: await viaSettings(c, owner),
      };
      expect(answers).toEqual({ http: c.expected, embed: c.expected, settings: c.expected });
    });
  }

  test("every operation is covered by at least one case", () => {
    expect(OPERATIONS.map((op) => op.id).filter((id) => !CASES.some((c) => c.operation === id))).toEqual([]);
  });

  test("a member's write: 403 permission_denied from a member key and from a signed-in member alike", async () => {
    const member = await user("member");
    for (const c of CASES.filter((c) => operation(c.operation).access === "write")) {
      expect({ case: c.name, http: await viaHttp(c, h.keys.member.key), settings: await viaSettings(c, member) }).toEqual({
        case: c.name,
        http: [403, "permission_denied"],
        settings: [403, "permission_denied"],
      });
    }
  });

  test("the settings area's pages answer with the API's status: a bad domain on the dashboard's form is 400", async () => {
    const owner = await signedInUser(h, "owner");
    const page = await owner.browser.post("/dashboard/certificates", { mode: "live", domain: "https://a.com/", port: "", name: "" });
    expect([page.status, (await viaHttp(CASES[0]!, h.keys.owner.key))[0]]).toEqual([400, 400]);
  });
});

describe("the rate limit, through the HTTP API and the settings area", () => {
  test("past the organization's requests per minute both answer 429 rate_limit_exceeded, with the same message", async () => {
    const limited = await createHarness({ limits: { requestsPerMinute: 2 } });
    try {
      const owner = await limited.core.services.admin.createUser({ organizationId: limited.org.id, email: "limited@acme.test", role: "owner" });
      const workspace = limited.core.accounts.workspace.as({ user: owner, organization: limited.org }, "live");
      const list = operation("listCertificates");
      const http = [];
      const settings = [];
      for (let i = 0; i < 3; i++) {
        const answer = await limited.request("GET", "/v1/certificates");
        http.push([answer.status, answer.body.error?.code ?? "(none)", answer.body.error?.message.replace(/\d+ seconds/, "N seconds")]);
        const error = await workspace.invoke(list).then(() => null, (e: CertkeeperError) => e);
        settings.push(error ? [error.status, error.code, error.message.replace(/\d+ seconds/, "N seconds")] : [200, "(none)", undefined]);
      }
      expect(http.map(([status, code]) => [status, code])).toEqual([
        [200, "(none)"],
        [200, "(none)"],
        [429, "rate_limit_exceeded"],
      ]);
      expect(settings).toEqual(http);
    } finally {
      await limited.close();
    }
  });
});
