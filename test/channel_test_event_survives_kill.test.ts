/**
 * CONTRACT §6: `POST /v1/channels/{id}/test` "sends a `test` event to that channel at once ... (the
 * test event is listed by GET /v1/events like any other)"; never lose stored data. The test event is
 * written down, its delivery leased to the process, before it is sent, as every event is: a SIGKILL
 * at the moment the receiver answers 2xx (from the receiver's answer callback, five rounds, the server
 * restarted each time) leaves it listed after the restart, never held by the receiver alone.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { startServe, type ServeProcess } from "./support/cli.ts";
import { temporaryDirectory } from "./support/temp.ts";
import { api, crashEnv, listAll, ownerKey, startKillReceiver } from "./support/kill_receiver.ts";

setDefaultTimeout(300_000);
const dir = temporaryDirectory("certkeeper-test-event-kill-");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

const ROUNDS = 5;

test("a test event the receiver answered 2xx is listed by GET /v1/events after a SIGKILL", async () => {
  const databaseUrl = `file:${join(dir, "testevt.db")}`;
  const env = await crashEnv(dir, databaseUrl);
  const key = await ownerKey(databaseUrl);
  const receiver = await startKillReceiver();
  cleanups.push(() => receiver.close());

  let server: ServeProcess = await startServe({ env });
  cleanups.push(() => server.stop("SIGKILL"));
  const channel = await api(server, key, "POST", "/v1/channels", { type: "webhook", name: "hook", config: { url: receiver.url } });
  expect(channel.status).toBe(201);
  const channelId = channel.body.data.id;

  const outcomes: Array<{ round: number; eventId: string; answered: boolean; listed: boolean; apiStatus: number | string }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const pid = server.pid;
    receiver.state.afterAnswer = (arrival) => {
      if (arrival.type === "test") process.kill(pid, "SIGKILL");
    };
    const apiStatus = await api(server, key, "POST", `/v1/channels/${channelId}/test`).then((r) => r.status, (e) => `no answer (${(e as Error).name})`);
    receiver.state.afterAnswer = () => {};
    await server.stop("SIGKILL");
    server = await startServe({ env });
    cleanups.push(() => server.stop("SIGKILL"));
    const arrival = receiver.arrivals.at(-1)!;
    const events = await listAll(server, key, "/v1/events");
    outcomes.push({ round, eventId: arrival.eventId, answered: arrival.answeredAt !== null, listed: events.some((e) => e.id === arrival.eventId), apiStatus });
  }
  console.log(JSON.stringify(outcomes));
  const lost = outcomes.filter((o) => o.answered && !o.listed);
  console.log(`test events answered 2xx by the receiver but never recorded: ${lost.length} of ${ROUNDS}`);
  expect(lost).toEqual([]);
});
