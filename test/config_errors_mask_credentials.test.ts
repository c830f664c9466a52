/**
 * A setting that cannot be used stops the start with one line naming the variable, and never a
 * credential: "API keys, passwords, … and the CT token are never written to a log or an error
 * message" (docs/operations.md, Logs; CONTRACT §10, §23 credentials masked). An operator who pastes a
 * database URL of the wrong scheme, or mistypes libsql://, must not find its password or token on the
 * console (and in whatever collects the container's stderr).
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { runCli } from "./support/cli.ts";

setDefaultTimeout(60_000);
const SECRET = "S3cretPassw0rdXYZ";

for (const [variable, value] of [
  ["CERTKEEPER_DATABASE_URL", `postgres://app:${SECRET}@db.internal:5432/certkeeper`],
  ["CERTKEEPER_DATABASE_URL", `libsql//db.example.com?authToken=${SECRET}`],
  ["CERTKEEPER_CT_LOG_LIST", `http://reader:${SECRET}@logs.internal/log_list.json`],
  ["CERTKEEPER_CT_URL", `https//reader:${SECRET}@ct.internal`],
] as const) {
  test(`${variable}=${value.replace(SECRET, "…")}: refused, naming the variable, without the secret`, async () => {
    const result = await runCli(["serve", "--port", "0"], { env: { [variable]: value, CERTKEEPER_DNS_SERVERS: "off" }, timeoutMs: 15_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(variable === "CERTKEEPER_DATABASE_URL" ? "database URL" : variable);
    expect(result.stderr + result.stdout).not.toContain(SECRET);
  });
}
