/**
 * The first start's hint (adapters/elysia/server.ts firstStartHint): the CLI commands to paste, against
 * the database this server uses, never printing its credentials, and the sign-in page to open.
 */
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { configFromEnv } from "../core/config/mod.ts";
import { firstStartHint } from "../adapters/elysia/server.ts";

const URL = "http://127.0.0.1:3000";
const CLI = "npm run --silent certkeeper --";

function hint(env: Record<string, string>) {
  const [message, fields] = firstStartHint(configFromEnv(env), URL);
  return { message, ...(fields as { commands: string[]; then: string; database: string; signIn: string }) };
}

describe("the first start's hint", () => {
  test("with the default database the commands set no CERTKEEPER_DATABASE_URL, and the sign-in page is named", () => {
    const h = hint({});
    expect(h.commands).toEqual([
      `${CLI} org create --name 'My org'`,
      `${CLI} user create --org 'My org' --email you@example.com --role owner --password -`,
    ]);
    expect(h.signIn).toBe(`${URL}/sign-in`);
    expect(h.then).not.toContain("********");
    expect(h.then).not.toContain("CERTKEEPER_DATABASE_AUTH_TOKEN");
  });

  test("a relative database file is made absolute in the commands", () => {
    const h = hint({ CERTKEEPER_DATABASE_URL: "file:state/mine.db" });
    expect(h.commands[0]).toBe(`CERTKEEPER_DATABASE_URL='file:${resolve("state/mine.db")}' ${CLI} org create --name 'My org'`);
  });

  test("a database server's password is masked in the commands, and the reader is told where to put it", () => {
    const h = hint({ CERTKEEPER_DATABASE_URL: "libsql://admin:s3cret-pass@db.example.internal:8080" });
    expect(JSON.stringify(h)).not.toContain("s3cret-pass");
    expect(h.commands[0]).toStartWith("CERTKEEPER_DATABASE_URL='libsql://admin:********@db.example.internal:8080'");
    expect(h.then).toContain("Put the database's credentials where the URL shows ********.");
  });

  test("with an auth token the reader is told to set it as for the server (the token itself is never printed)", () => {
    const h = hint({ CERTKEEPER_DATABASE_URL: "libsql://db.example.internal:8080", CERTKEEPER_DATABASE_AUTH_TOKEN: "tok-abcdef123456" });
    expect(h.then).toContain("Set CERTKEEPER_DATABASE_AUTH_TOKEN as for the server.");
    expect(h.then).not.toContain("Put the database's credentials");
    expect(JSON.stringify(h)).not.toContain("tok-abcdef123456");
  });
});
