/**
 * A real browser for tests: Debian's Chromium (or CERTKEEPER_TEST_CHROMIUM) driven by playwright-core,
 * headless, in a fresh profile that is removed afterwards. Where no Chromium is found, {@link findChromium}
 * says why, so the tests can be reported as skipped with the reason.
 *
 * Chromium's headless shell (Debian's chromium-headless-shell: the same Blink, without the desktop
 * browser around it, and what Playwright itself runs for headless tests) is taken first. The full
 * browser in headless mode spends about a third of a core while idle and 150 ms of CPU a page load
 * (measured: 50 loads of a small page, 7.7 s of CPU against 3.2 s; 5 s idle, 2.6 s against 0.3 s).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium", "/usr/bin/google-chrome"];

/** Where screenshots go (git-ignored). */
export const ARTIFACTS = resolve(import.meta.dir, "../../test-artifacts/web");

/**
 * Whether the browser tests keep a screenshot of every step (CERTKEEPER_TEST_SCREENSHOTS=1), for a
 * person to look at; a failure's screenshot is kept always. Each full-page PNG costs Chromium about a
 * fifth of a second of CPU and asserts nothing, so a plain `npm test` takes none.
 */
export const STEP_SCREENSHOTS = process.env.CERTKEEPER_TEST_SCREENSHOTS === "1";

export type ChromiumLookup = { found: true; path: string } | { found: false; reason: string };

export function findChromium(env: Record<string, string | undefined> = process.env): ChromiumLookup {
  const chosen = env.CERTKEEPER_TEST_CHROMIUM;
  if (chosen) return existsSync(chosen) ? { found: true, path: chosen } : { found: false, reason: `CERTKEEPER_TEST_CHROMIUM=${chosen} does not exist` };
  const path = CANDIDATES.find((candidate) => existsSync(candidate));
  if (path) return { found: true, path };
  return {
    found: false,
    reason: `no Chromium at ${CANDIDATES.join(", ")} (install it: apt-get install -y chromium-headless-shell, or set CERTKEEPER_TEST_CHROMIUM)`,
  };
}

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile; one context (one cookie jar), as one person's browser. */
export async function launchBrowser(executablePath: string): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "certkeeper-chromium-"));
  mkdirSync(ARTIFACTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1200, height: 900 },
  });
  context.setDefaultTimeout(10_000);
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
