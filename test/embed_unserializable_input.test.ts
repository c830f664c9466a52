/**
 * A value of the wrong type that JSON cannot write (a BigInt, an object that holds itself) is refused
 * with the field's 400 error (CONTRACT §4), as a JSON-writable wrong type is: naming it in the message
 * no longer fails as internal_error.
 */
import { expect, test } from "bun:test";
import { silentLogger, type Logger } from "certkeeper";
import { CertkeeperApiError, createCertkeeper } from "certkeeper/embed";

async function thrown(call: () => Promise<unknown>): Promise<{ code: string; status: number }> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(CertkeeperApiError);
    return { code: (error as CertkeeperApiError).code, status: (error as CertkeeperApiError).status };
  }
  throw new Error("expected the call to throw");
}

async function embedded(errors: string[]) {
  const logger: Logger = { ...silentLogger, error: (message) => errors.push(message) };
  return createCertkeeper({ database: ":memory:", logger, config: { dnsServers: "off" } });
}

test("a BigInt port, tag or limit is 400 invalid_request, not 500 internal_error", async () => {
  const errors: string[] = [];
  const ck = await embedded(errors);
  try {
    const answers = {
      port: await thrown(() => ck.certificates.add({ domain: "example.com", port: 443n as never })),
      tags: await thrown(() => ck.certificates.add({ domain: "example.com", tags: [1n] as never })),
      domain: await thrown(() => ck.certificates.add({ domain: 5n as never })),
      id: await thrown(() => ck.certificates.get(5n as never)),
      limit: await thrown(() => ck.certificates.list({ limit: 5n as never })),
      webhookUrl: await thrown(() => ck.channels.add({ type: "webhook", name: "Ops", config: { url: 1n as never } })),
    };
    // What the same mistakes with a JSON-writable wrong type answer (see the last test).
    expect(answers).toEqual({
      port: { code: "invalid_request", status: 400 },
      tags: { code: "invalid_request", status: 400 },
      domain: { code: "invalid_domain", status: 400 },
      id: { code: "invalid_request", status: 400 },
      limit: { code: "invalid_request", status: 400 },
      webhookUrl: { code: "invalid_webhook_url", status: 400 },
    });
    expect(errors).toEqual([]);
  } finally {
    await ck.close();
  }
});

test("a cyclic object where a string is expected is 400, not 500 internal_error", async () => {
  const errors: string[] = [];
  const ck = await embedded(errors);
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  try {
    expect({
      name: await thrown(() => ck.certificates.add({ domain: "example.com", name: cyclic as never })),
      domain: await thrown(() => ck.certificates.add({ domain: cyclic as never })),
      status: await thrown(() => ck.certificates.list({ status: cyclic as never })),
    }).toEqual({
      name: { code: "invalid_request", status: 400 },
      domain: { code: "invalid_domain", status: 400 },
      status: { code: "invalid_request", status: 400 },
    });
    expect(errors).toEqual([]);
  } finally {
    await ck.close();
  }
});

test("the same fields with JSON-writable wrong types are already 400", async () => {
  const errors: string[] = [];
  const ck = await embedded(errors);
  try {
    expect({
      port: await thrown(() => ck.certificates.add({ domain: "example.com", port: "443" as never })),
      tags: await thrown(() => ck.certificates.add({ domain: "example.com", tags: [1] as never })),
      domain: await thrown(() => ck.certificates.add({ domain: 5 as never })),
      id: await thrown(() => ck.certificates.get(5 as never)),
      limit: await thrown(() => ck.certificates.list({ limit: 0 })),
      webhookUrl: await thrown(() => ck.channels.add({ type: "webhook", name: "Ops", config: { url: 1 as never } })),
      name: await thrown(() => ck.certificates.add({ domain: "example.com", name: { a: 1 } as never })),
      status: await thrown(() => ck.certificates.list({ status: { a: 1 } as never })),
    }).toEqual({
      port: { code: "invalid_request", status: 400 },
      tags: { code: "invalid_request", status: 400 },
      domain: { code: "invalid_domain", status: 400 },
      id: { code: "invalid_request", status: 400 },
      limit: { code: "invalid_request", status: 400 },
      webhookUrl: { code: "invalid_webhook_url", status: 400 },
      name: { code: "invalid_request", status: 400 },
      status: { code: "invalid_request", status: 400 },
    });
    expect(errors).toEqual([]);
  } finally {
    await ck.close();
  }
});
