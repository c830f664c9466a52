/** Users who can sign in, and browsers signed in as them, for the web face's in-process tests. */
import { expect } from "bun:test";
import type { Role } from "../../core/base/records.ts";
import type { Harness } from "./harness.ts";
import { WebClient } from "./web_client.ts";

export const PASSWORD = "correct horse battery staple";

export interface WebUser {
  id: string;
  email: string;
  browser: WebClient;
}

/** A new user of `role` (with a password) in the harness's organization, signed in in a browser of their own. */
export async function signedInUser(h: Harness, role: Role, organizationId = h.org.id): Promise<WebUser> {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@acme.test`;
  const user = await h.core.services.admin.createUser({ organizationId, email, role, password: PASSWORD });
  const browser = new WebClient(h.app);
  const answer = await browser.signIn(email, PASSWORD);
  expect({ status: answer.status, location: answer.headers.get("location") }).toEqual({ status: 303, location: "/" });
  // The dashboard's forms carry the session's token, as the next form a person sends would.
  expect((await browser.follow(answer)).status).toBe(200);
  return { id: user.id, email, browser };
}

/** The new key shown on the page right after "Create API Key". */
export function shownKey(html: string): string {
  const key = /value="(ck_(?:live|test)_[0-9A-Za-z]{38})"/.exec(html)?.[1];
  if (!key) throw new Error("no API key on the page");
  return key;
}
