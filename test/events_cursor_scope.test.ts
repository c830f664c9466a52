/**
 * GET /v1/events's cursor tells nothing of other organizations or of the other mode: it names the
 * page's last event by id and creation time, never the installation-wide sequence number (whose gaps
 * between two of A's cursors counted the events everyone else raised meanwhile). It pages on through
 * A's own events, and presented by another organization (or the other mode) it leads to no page of
 * theirs: it is refused as a cursor made for another list, as a made-up one is.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, type StoreKind, loopbackTransports } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { FakeClock } from "./support/fake_clock.ts";

let receiver: HttpReceiver;
let transports: ReturnType<typeof createTransports>;

beforeAll(async () => {
  transports = await loopbackTransports();
  receiver = await startHttpReceiver();
  receiver.answer = () => ({ status: 204 });
});
afterAll(async () => {
  await receiver.close();
  await transports.close();
});

/**
 * A raises one test event, then `others` are raised elsewhere, then A raises another; A reads its
 * events a page of one at a time. Returns what A's cursor holds and what the pages were.
 */
async function pagesOfA(store: StoreKind, others: number, elsewhere: "other organization" | "own live mode") {
  const clock = new FakeClock(Date.UTC(2026, 5, 1));
  const h = await createHarness({ store, transports, clock, config: { deliveryTimeoutMs: 1000 } });
  try {
    // A: the test-mode key of the harness's organization when the "elsewhere" is its own live mode.
    const aKey = elsewhere === "own live mode" ? h.keys.test.key : h.keys.owner.key;
    let bKey = h.keys.owner.key;
    if (elsewhere === "other organization") {
      const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "enterprise" });
      bKey = (await h.makeKey("owner", "live", other.id)).key;
    }
    const channel = async (key: string) =>
      expectData(await h.request("POST", "/v1/channels", { key, body: { type: "webhook", name: "hook", config: { url: `${receiver.url}/ok` } } }), 201).id;
    const a = await channel(aKey);
    const b = await channel(bKey);
    expectData(await h.request("POST", `/v1/channels/${a}/test`, { key: aKey }), 200);
    for (let i = 0; i < others; i++) expectData(await h.request("POST", `/v1/channels/${b}/test`, { key: bKey }), 200);
    expectData(await h.request("POST", `/v1/channels/${a}/test`, { key: aKey }), 200);
    const first = await h.request("GET", "/v1/events?limit=1", { key: aKey });
    const newest = expectData(first, 200) as Array<{ id: string; createdAt: string }>;
    const cursor: string = first.body.meta.nextCursor;
    const second = await h.request("GET", `/v1/events?limit=1&cursor=${cursor}`, { key: aKey });
    // The other side presenting A's cursor learns nothing from it: no page of its own events.
    const theirs = await h.request("GET", `/v1/events?limit=1&cursor=${cursor}`, { key: bKey });
    return {
      held: JSON.parse(Buffer.from(cursor, "base64url").toString()),
      newest: newest.map((e) => e.id),
      newestAt: Date.parse(newest[0]!.createdAt),
      older: expectData(second, 200).map((e: { id: string }) => e.id),
      end: second.body.meta.nextCursor,
      theirs: [theirs.status, theirs.body.error?.code],
    };
  } finally {
    await h.close();
  }
}

for (const store of ["memory", "libsql"] as const) {
  describe(`${store} store`, () => {
    for (const elsewhere of ["other organization", "own live mode"] as const) {
      test(`A's events cursor names A's own event, whatever ${elsewhere === "other organization" ? "another organization" : "A's live mode"} raised meanwhile, and pages on`, async () => {
        for (const others of [0, 5]) {
          const seen = await pagesOfA(store, others, elsewhere);
          // The list, the digest of its filters, the page's last event's time and id: no number that
          // counts anyone's events.
          expect(seen.held).toEqual(["events", expect.any(String), seen.newestAt, seen.newest[0]]);
          expect(seen.older).toHaveLength(1);
          expect(seen.older).not.toEqual(seen.newest);
          expect(seen.end).toBeNull();
          expect(seen.theirs).toEqual([400, "invalid_request"]);
        }
      });
    }
  });
}

test("a cursor holding a sequence number (as versions before named a page's end) is refused, 400: probing numbers would count other organizations' events", async () => {
  const h = await createHarness({ store: "memory", transports });
  try {
    for (const position of [[1], [Number.MAX_SAFE_INTEGER]]) {
      const cursor = Buffer.from(JSON.stringify(position)).toString("base64url");
      const answer = await h.request("GET", `/v1/events?cursor=${cursor}`);
      expect([answer.status, answer.body.error?.code]).toEqual([400, "invalid_request"]);
    }
  } finally {
    await h.close();
  }
});

test("a made-up cursor naming an event is refused as invalid_request; a real one at the end of the list gives the last page", async () => {
  const h = await createHarness({ transports, config: { deliveryTimeoutMs: 1000 } });
  try {
    const made = Buffer.from(JSON.stringify(["evt_doesnotexist0000000"])).toString("base64url");
    const refused = await h.request("GET", `/v1/events?cursor=${made}`);
    expect([refused.status, refused.body.error.code]).toEqual([400, "invalid_request"]);
    expect(refused.body.error.message).toContain("pass meta.nextCursor of the previous page");
    const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "hook", config: { url: `${receiver.url}/ok` } } }), 201).id;
    expectData(await h.request("POST", `/v1/channels/${channel}/test`), 200);
    expectData(await h.request("POST", `/v1/channels/${channel}/test`), 200);
    const first = await h.request("GET", "/v1/events?limit=1");
    const end = await h.request("GET", `/v1/events?limit=1&cursor=${first.body.meta.nextCursor}`);
    expect([end.status, expectData(end, 200).length, end.body.meta.nextCursor]).toEqual([200, 1, null]);
  } finally {
    await h.close();
  }
});
