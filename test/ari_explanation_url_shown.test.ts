/**
 * A CA's ARI answer (RFC 9773, CONTRACT §19) carries an `explanationURL` the CA chooses, and operators
 * are shown it (the CLI's note, notifications, the console). It is kept as the URL parser reads it (its
 * href: tabs and line breaks dropped, controls, spaces and non-ASCII percent-encoded), never as the CA
 * wrote it: a URL with line breaks, a terminal escape or a bidi override forges no line in
 * `certkeeper check`'s note on stderr or in a notification's text.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DAY, HOUR } from "../core/base/mod.ts";
import { readRenewalInfo } from "../core/ari/renewal_answer.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { telegramPayload } from "../core/notify/telegram_payload.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { certIdOf, startAriServer, type AriServer } from "./support/ari_server.ts";
import { runCli, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(30_000);

const HOSTILE = "https://ca.example/incident\n01:02:03 INFO  certkeeper: all certificates valid\r\n\u001b]0;owned\u0007\u202eevil";

describe("an ARI explanationURL with line breaks and escapes", () => {
  const domain = `ari-explain.${TEST_DOMAIN}`;
  const workspace = workspacesRemovedAfterAll();
  let ari: AriServer;
  let server: TlsTestServer;

  beforeAll(async () => {
    const { rsaIntermediate } = await testPki();
    ari = await startAriServer({ tlsIssuer: rsaIntermediate });
    const now = Date.now();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - 10 * DAY), notAfter: new Date(now + 80 * DAY) });
    server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    // The CA moves the window into the past (a mass revocation ahead) and explains, in its own words.
    const end = Math.floor((now - HOUR) / 1000) * 1000;
    ari.answer(certIdOf(leaf), { kind: "window", start: end - HOUR, end, explanationUrl: HOSTILE });
  });

  afterAll(async () => {
    await server?.close();
    await ari?.close();
  });

  test("check's note on stderr stays one line per target, with no control or bidi character", async () => {
    const { root } = await testPki();
    const ws = workspace();
    const caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const result = await runCli(["check", `${domain}:${server.port}`], {
      env: {
        ...ws.env,
        CERTKEEPER_RESOLVE: `${domain}=127.0.0.1`,
        CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
        CERTKEEPER_EXTRA_CA_FILE: caFile,
        CERTKEEPER_TLS_TIMEOUT: "5s",
        CERTKEEPER_REVOCATION: "off",
        CERTKEEPER_ACME_DIRECTORIES: `certkeeper Test RSA CA=${ari.directoryUrl}`,
      },
    });
    // The CA was asked and its request understood: the note explains the early renewal.
    expect(result.stdout).toMatch(/renewal_requested/);
    expect(result.stderr).toContain("asks for this certificate to be replaced early");
    // One note, one line: nothing the CA wrote starts a line of its own.
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines.filter((line) => line.includes("INFO  certkeeper: all certificates valid") && !line.startsWith(`${domain}:`))).toEqual([]);
    expect(lines.length).toBe(1);
    expect(result.stderr).not.toMatch(/[\r\u001b\u0007\u202e]/);
  });

  test("the renewal_requested notification names the explanation on one line (Telegram's plain text, the email's facts)", () => {
    const answer = readRenewalInfo(
      new TextEncoder().encode(JSON.stringify({ suggestedWindow: { start: "2030-01-01T00:00:00Z", end: "2030-01-02T00:00:00Z" }, explanationURL: HOSTILE })),
    );
    // Still recognised as the CA's explanation (a URL), not dropped.
    expect(answer.explanationUrl).toStartWith("https://ca.example/incident");
    const event = renewalRequestedEvent(answer.explanationUrl!);
    const described = describeEvent(event);
    const explanation = described.facts.find((fact) => fact.name === "Explanation");
    expect(explanation?.value).toStartWith("https://ca.example/incident");
    expect(explanation?.value).not.toMatch(/[\n\r\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    const text = telegramPayload(event, described, 1).text;
    expect(text.split("\n").filter((line) => line.includes("all certificates valid") && !line.startsWith("Explanation:"))).toEqual([]);
  });
});

test("an event written with the CA's text as written (before it was kept parsed) is described with the URL read again", () => {
  const described = describeEvent(renewalRequestedEvent(HOSTILE));
  const explanation = described.facts.find((fact) => fact.name === "Explanation");
  expect(explanation?.value).toStartWith("https://ca.example/incident");
  expect(explanation?.value).not.toMatch(/[\n\r\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  // Not a URL at all (text a release never checked): no explanation line rather than the text.
  expect(describeEvent(renewalRequestedEvent("see\nour blog")).facts.find((fact) => fact.name === "Explanation")).toBeUndefined();
});

/** A certificate.renewal_requested event as stored, with the explanation given. */
function renewalRequestedEvent(explanationUrl: string) {
  return {
    id: "evt_1",
    organizationId: "org_1",
    mode: "live",
    type: "certificate.renewal_requested",
    certificateId: "cert_1",
    createdAt: Date.parse("2030-01-01T00:00:00Z"),
    data: {
      certificate: { domain: "shop.example", port: 443, name: "shop.example", status: "expiring", statusReason: "renewal_requested", expiresAt: "2030-03-01T00:00:00.000Z", daysUntilExpiry: 59, issuer: "R11", serialNumber: "01" },
      window: { start: "2030-01-01T00:00:00.000Z", end: "2030-01-02T00:00:00.000Z" },
      explanationUrl,
    },
  } as never;
}

