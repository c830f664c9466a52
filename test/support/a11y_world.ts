/**
 * A console to use in a browser (for the accessibility tests): a real `certkeeper serve` with an owner,
 * three certificates served by local TLS servers (valid, expiring, a name mismatch), a webhook channel,
 * and Debian's Chromium through playwright-core.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { launchBrowser, type TestBrowser } from "./browser.ts";
import { startServe, tempWorkspace, type ServeProcess } from "./cli.ts";
import { seedAccounts } from "./accounts.ts";
import { testPki, TEST_DOMAIN } from "./harness.ts";
import { chainPem, createLeaf, DAY } from "./pki.ts";
import { startTlsServer, type TlsTestServer } from "./servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./receivers.ts";

export const OWNER = { email: "owner@a11y.test", password: "a11y owner passw0rd" };

export interface A11yWorld {
  serve: ServeProcess;
  browser: TestBrowser;
  receiver: HttpReceiver;
  key: string;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  signIn(page: Page, email?: string, password?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startA11yWorld(executablePath: string, options: { plan?: "free" | "pro"; certificates?: boolean } = {}): Promise<A11yWorld> {
  const ws = tempWorkspace("certkeeper-a11y-");
  const { root, rsaIntermediate } = await testPki();
  const caFile = join(ws.dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  const seeded = await seedAccounts(ws.env.CERTKEEPER_DATABASE_URL!, {
    name: "A11y Co",
    plan: options.plan ?? "pro",
    users: [{ email: OWNER.email, role: "owner", password: OWNER.password }],
    keys: true,
  });
  const key = seeded.users[0]!.key!;
  const servers: TlsTestServer[] = [];
  const [serve, browser, receiver] = await Promise.all([
    startServe({
      env: {
        ...ws.env,
        CERTKEEPER_RESOLVE: `*.a11y.${TEST_DOMAIN}=127.0.0.1`,
        CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
        CERTKEEPER_EXTRA_CA_FILE: caFile,
        CERTKEEPER_TLS_TIMEOUT: "5s",
        CERTKEEPER_LOG_LEVEL: "warn",
      },
      cwd: ws.dir,
    }),
    launchBrowser(executablePath),
    startHttpReceiver(),
  ]);
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${serve.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  if (options.certificates !== false) {
    for (const [name, days, names] of [
      ["shop", 45, [`shop.a11y.${TEST_DOMAIN}`]],
      ["api", 5, [`api.a11y.${TEST_DOMAIN}`]],
      ["mail", 60, [`other.a11y.${TEST_DOMAIN}`]],
    ] as const) {
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [...names], notAfter: new Date(Date.now() + days * DAY + 3_600_000) });
      const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
      servers.push(server);
      const added = await api("POST", "/v1/certificates", { domain: `${name}.a11y.${TEST_DOMAIN}`, port: server.port, tags: [`team:${name}`], alertPolicy: "days" });
      if (added.status !== 201) throw new Error(`adding ${name}: ${added.status} ${JSON.stringify(added.body)}`);
    }
    const channel = await api("POST", "/v1/channels", { type: "webhook", name: "Ops hook", config: { url: `${receiver.url}/hook` } });
    if (channel.status !== 201) throw new Error(`adding the channel: ${channel.status}`);
  }
  return {
    serve,
    browser,
    receiver,
    key,
    api,
    async signIn(page, email = OWNER.email, password = OWNER.password) {
      await page.context().clearCookies();
      await page.goto(`${serve.url}/sign-in`);
      await page.locator("#email").fill(email);
      await page.locator("#password").fill(password);
      await page.locator("#password").press("Enter");
      await page.waitForURL((url) => !url.pathname.startsWith("/sign-in"));
    },
    async close() {
      await browser?.close();
      await serve?.stop();
      await Promise.all([...servers.map((s) => s.close()), receiver?.close()]);
      ws.cleanup();
    },
  };
}

/** WCAG's contrast ratio of two colours given as rgb()/rgba() strings (alpha blended over `under`). */
export function contrast(fg: string, bg: string): number {
  const lum = (c: number[]) => {
    const [r, g, b] = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const parse = (s: string) => (s.match(/[\d.]+/g) ?? []).map(Number);
  const a = lum(parse(fg).slice(0, 3));
  const b = lum(parse(bg).slice(0, 3));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}
