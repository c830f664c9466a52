/**
 * CONTRACT §3: a key acts with its creator's role as it is now. A key in use (its grant read, and so
 * cached, by earlier requests) loses its writes on the very next request once its user is made a
 * member, and stops working once its user is removed.
 */
import { expect, test } from "bun:test";
import { createHarness, expectData, expectError, type StoreKind } from "./support/harness.ts";

for (const store of ["memory", "libsql"] as StoreKind[]) {
  test(`${store} store: a key used before its user is demoted is refused writes at once; removed, it is expired`, async () => {
    const h = await createHarness({ store });
    try {
      const { key, userId } = await h.makeKey("admin");
      const body = { type: "email", name: "warm", config: { email: "warm@acme.test" } };
      const channel = expectData(await h.request("POST", "/v1/channels", { key, body }), 201);
      expectData(await h.request("GET", "/v1/channels", { key }), 200);
      await h.store.users.update(userId, { role: "member" });
      expectError(await h.request("DELETE", `/v1/channels/${channel.id}`, { key }), 403, "permission_denied");
      expectData(await h.request("GET", `/v1/channels/${channel.id}`, { key }), 200);
      await h.store.users.remove(userId, Date.now());
      expectError(await h.request("GET", "/v1/channels", { key }), 401, "expired_api_key");
    } finally {
      await h.close();
    }
  });
}
