/**
 * Input nesting arrays and objects more deeply than the HTTP API reads a body (32 levels) is refused
 * with invalid_request (400), not a stack overflow answered as internal_error.
 */
import { expect, test } from "bun:test";
import { silentLogger } from "certkeeper";
import { CertkeeperApiError, createCertkeeper } from "certkeeper/embed";

function nested(levels: number): unknown {
  let value: unknown = "x";
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

async function answer(levels: number): Promise<{ code: string; status: number; logged: string[] }> {
  const logged: string[] = [];
  const ck = await createCertkeeper({ database: ":memory:", logger: { ...silentLogger, error: (message) => logged.push(message) }, config: { dnsServers: "off" } });
  try {
    await ck.certificates.add({ domain: "example.com", name: nested(levels) as never });
  } catch (error) {
    expect(error).toBeInstanceOf(CertkeeperApiError);
    return { code: (error as CertkeeperApiError).code, status: (error as CertkeeperApiError).status, logged };
  } finally {
    await ck.close();
  }
  throw new Error("expected add() to throw");
}

test("a name nested 100,000 levels deep is 400 invalid_request, not 500 internal_error", async () => {
  expect(await answer(100_000)).toEqual({ code: "invalid_request", status: 400, logged: [] });
});

test("the same name nested 20,000 levels deep is 400 invalid_request", async () => {
  expect(await answer(20_000)).toEqual({ code: "invalid_request", status: 400, logged: [] });
});
