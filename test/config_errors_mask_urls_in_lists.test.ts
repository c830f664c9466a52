/**
 * A setting refused at start never quotes back a credential, wherever the URL stands in the value: a
 * reader that quotes only the one URL it refuses (CERTKEEPER_ACME_DIRECTORIES, a list) masks it too.
 */
import { expect, test } from "bun:test";
import { configFromEnv } from "../core/config/mod.ts";

const SECRET = "S3cretPassw0rdXYZ";

function refusal(env: Record<string, string>): string {
  try {
    configFromEnv(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("accepted");
}

test("CERTKEEPER_CT_URL mistyped: refused without the secret", () => {
  const message = refusal({ CERTKEEPER_CT_URL: `https//reader:${SECRET}@ct.internal` });
  expect(message).toContain("CERTKEEPER_CT_URL");
  expect(message).not.toContain(SECRET);
});

test("CERTKEEPER_ACME_DIRECTORIES with a mistyped URL carrying a password: refused without the secret", () => {
  const message = refusal({ CERTKEEPER_ACME_DIRECTORIES: `Internal CA=https//acme:${SECRET}@ca.internal/directory` });
  expect(message).toContain("CERTKEEPER_ACME_DIRECTORIES");
  expect(message).not.toContain(SECRET);
});

test("CERTKEEPER_ACME_DIRECTORIES with a mistyped URL carrying a token: refused without the secret", () => {
  const message = refusal({ CERTKEEPER_ACME_DIRECTORIES: `Internal CA=https//ca.internal/directory?token=${SECRET}` });
  expect(message).not.toContain(SECRET);
});

test("a password holding an @ is masked whole", () => {
  const message = refusal({ CERTKEEPER_ACME_DIRECTORIES: `Internal CA=https//acme:S3cret@Passw0rdXYZ@ca.internal/directory` });
  expect(message).not.toContain("S3cret");
  expect(message).not.toContain("Passw0rdXYZ");
});
