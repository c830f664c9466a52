/**
 * CONTRACT §6/§16: chat webhook URLs are credentials, shown masked after creation. A PATCH that sends
 * the config back as GET shows it (the masked URL) keeps the stored URL: the channel still delivers to
 * the real webhook, not to a URL with `********` in it.
 */
import { afterEach, expect, test } from "bun:test";
import { expectData } from "./support/harness.ts";
import { fleetWorld, type FleetWorld } from "./support/fleet_world.ts";

let w: FleetWorld;
afterEach(async () => {
  await w?.close();
  w = undefined as unknown as FleetWorld;
});

test("a teams channel PATCHed with its masked webhookUrl, as GET shows it, keeps delivering to the real URL", async () => {
  w = await fleetWorld();
  const realPath = "/workflows/abc/triggers/manual/paths/invoke?sig=s3cret";
  const teams = expectData(
    await w.h.request("POST", "/v1/channels", { body: { type: "teams", name: "Teams", config: { webhookUrl: `${w.teams.url}${realPath}` } } }),
    201,
  );
  const shown = expectData(await w.h.request("GET", `/v1/channels/${teams.id}`), 200);
  expect(shown.config.webhookUrl).toContain("********");
  expect(shown.config.webhookUrl).not.toContain("s3cret");
  // The config sent back as shown, with a new name.
  const patched = expectData(await w.h.request("PATCH", `/v1/channels/${teams.id}`, { body: { name: "Teams on call", config: shown.config } }), 200);
  expect(patched.config).toEqual(shown.config);
  const result = expectData(await w.h.request("POST", `/v1/channels/${teams.id}/test`), 200);
  expect(result.status).toBe("delivered");
  expect(w.teams.requests.map((r) => r.path)).toEqual([realPath]);
});
