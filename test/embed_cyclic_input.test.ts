/**
 * A channel config holding a reference cycle, which a plain-JS host can pass and no JSON can, is
 * refused with invalid_config (400), as a wrong config is (CONTRACT §4): the host is not hung. Each
 * call runs in a child process killed after 8 s, so that a hang fails the test instead of the run.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";

setDefaultTimeout(30_000);
const EMBED = join(import.meta.dir, "../adapters/embed/mod.ts");

async function runChild(body: string): Promise<{ finished: boolean; stdout: string }> {
  const script = `
    import { createCertkeeper, CertkeeperApiError } from ${JSON.stringify(EMBED)};
    const ck = await createCertkeeper({ database: ":memory:", logger: { debug() {}, info() {}, warn() {}, error() {}, enabled: () => false }, config: { dnsServers: "off" } });
    const headers = { "X-Team": "ops" };
    headers.self = headers;
    try {
      ${body}
      console.log(JSON.stringify({ outcome: "resolved" }));
    } catch (error) {
      console.log(JSON.stringify({ outcome: error instanceof CertkeeperApiError ? "api_error" : "other", code: error.code, status: error.status }));
    }
    await ck.close();
  `;
  const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => child.kill(9), 8_000);
  const code = await child.exited;
  clearTimeout(timer);
  return { finished: code === 0 && child.signalCode === null, stdout: (await new Response(child.stdout).text()).trim() };
}

test("channels.add() with a cyclic webhook config throws invalid_config (400) instead of hanging the host", async () => {
  const result = await runChild(`await ck.channels.add({ type: "webhook", name: "Ops", config: { url: "https://hooks.example.com/x", headers } });`);
  expect(result.finished).toBe(true);
  expect(JSON.parse(result.stdout)).toEqual({ outcome: "api_error", code: "invalid_config", status: 400 });
});

test("channels.update() with a cyclic webhook config throws invalid_config (400) instead of hanging the host", async () => {
  const result = await runChild(`
    const channel = await ck.channels.add({ type: "webhook", name: "Ops", config: { url: "https://hooks.example.com/x" } });
    await ck.channels.update(channel.id, { config: { url: "https://hooks.example.com/x", headers } });`);
  expect(result.finished).toBe(true);
  expect(JSON.parse(result.stdout)).toEqual({ outcome: "api_error", code: "invalid_config", status: 400 });
});
