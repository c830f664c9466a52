/**
 * A password or token in a URL is never printed (docs/configuration.md, CONTRACT §23): in a refusal
 * that quotes a mistyped URL (a token alone as user information, a scheme without its colon), in a
 * text quoting several URLs, and whatever the case of a token's query parameter name.
 */
import { describe, expect, test } from "bun:test";
import { configFromEnv } from "../core/config/config.ts";
import { maskUrl, maskUrlsIn } from "../core/config/mask_url.ts";

const SECRET = "t0ken-n0t-for-the-terminal";

function refusalOf(env: Record<string, string>): string {
  try {
    configFromEnv(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("secrets never quoted back", () => {
  test("CERTKEEPER_ACME_DIRECTORIES with a mistyped URL whose user information is a token alone", () => {
    const message = refusalOf({ CERTKEEPER_ACME_DIRECTORIES: `Internal=https//${SECRET}@ca.internal.example/dir` });
    expect(message).toStartWith("CERTKEEPER_ACME_DIRECTORIES: ");
    expect(message).not.toContain(SECRET);
    expect(message).toContain("ca.internal.example");
  });

  test("a text quoting two URLs masks both", () => {
    const text = `could not read https://reader:${SECRET}-1@a.example/list.json nor https://${SECRET}-2@b.example/list.json`;
    const masked = maskUrlsIn(text);
    expect(masked).not.toContain(SECRET);
    expect(masked).toContain("a.example");
    expect(masked).toContain("b.example");
  });

  test("a URL mistyped without its scheme's colon is masked by maskUrl (it is quoted back in the error refusing it)", () => {
    const masked = maskUrl(`libsql//admin:${SECRET}@db.example.com`);
    expect(masked).not.toContain(SECRET);
    expect(masked).toBe("libsql//admin:********@db.example.com");
  });

  test("a token parameter is masked whatever the case of its name", () => {
    for (const name of ["TOKEN", "AuthToken", "API_KEY", "Password"]) {
      const masked = maskUrl(`https://ct.example/v1?${name}=${SECRET}&region=eu`);
      expect(masked).toBe(`https://ct.example/v1?${name}=********&region=eu`);
    }
  });
});
