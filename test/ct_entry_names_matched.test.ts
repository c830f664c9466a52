/**
 * Which names of a logged certificate are matched against watches (CONTRACT §21): its SAN dNSNames as
 * DNS compares them (any case, an absolute name's trailing dot), and its subject CN when the CN is a
 * host name, not when it is a product's or a company's name.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function eventsFor(w: CtWorld, count: number) {
  return w.until(`${count} events`, async () => {
    const events = await w.issued();
    return events.length >= count ? events : null;
  });
}

test("a SAN name in upper case, or absolute (trailing dot), matches its watch and is shown lower-case, without the dot", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  await w.caughtUp(0);
  const watch = await w.addWatch({ domain: "case.example" });
  await w.issue({ dnsNames: ["WWW.Case.Example"], subject: "CN=Shop" });
  await w.issue({ dnsNames: ["api.case.example."], subject: "CN=Api" });
  w.publishAll();
  await w.caughtUp(2);
  const events = await eventsFor(w, 2);
  expect(events.map((event) => [event.data.watchId, event.data.dnsNames])).toEqual([
    [watch.id, ["www.case.example"]],
    [watch.id, ["api.case.example"]],
  ]);
});

test("a subject CN that is a host name is matched like a SAN name; one that is not a host name is no name", async () => {
  world = await startCtWorld({ logs: [{ kind: "rfc6962" }] });
  const w = world;
  await w.caughtUp(0);
  const watch = await w.addWatch({ domain: "cn.example" });
  // Its only watched name is its CN.
  await w.issue({ dnsNames: ["unrelated.test"], subject: "CN=Legacy.CN.example" });
  // A CN that names a company: not one of the certificate's names.
  await w.issue({ dnsNames: ["shop.cn.example"], subject: "CN=Example Corp" });
  w.publishAll();
  await w.caughtUp(2);
  const events = await eventsFor(w, 2);
  expect(events.map((event) => [event.data.watchId, event.data.dnsNames])).toEqual([
    [watch.id, ["unrelated.test", "legacy.cn.example"]],
    [watch.id, ["shop.cn.example"]],
  ]);
});

test("an entry whose timestamp is ahead of this clock (a log's clock skewed an hour) is read and matched now, not waited for", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  await w.caughtUp(0);
  const watch = await w.addWatch({ domain: "skew.example" });
  await w.issue({ dnsNames: ["skew.example"], timestamp: Date.now() + 60 * 60 * 1000 });
  w.publishAll();
  await w.caughtUp(1);
  const events = await eventsFor(w, 1);
  expect(events.map((event) => [event.data.watchId, event.data.dnsNames])).toEqual([[watch.id, ["skew.example"]]]);
});
