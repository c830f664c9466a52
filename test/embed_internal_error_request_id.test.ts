/**
 * An unexpected failure is thrown as internal_error whose message says the request id identifies it
 * in the logs: the error carries that id, and the "embedded call failed" log line carries the same.
 */
import { expect, test } from "bun:test";
import { DEFAULT_CONFIG, silentLogger, type LogFields } from "certkeeper";
import { CertkeeperApiError, createCertkeeper } from "certkeeper/embed";
import { createMemoryStore } from "../adapters/memory/mod.ts";

test("an internal_error names a request id that its log line carries too", async () => {
  const store = createMemoryStore();
  store.certificates.list = async () => {
    throw new Error("disk on fire");
  };
  const logged: Array<{ message: string; fields?: LogFields }> = [];
  const ck = await createCertkeeper({
    database: store,
    config: { ...DEFAULT_CONFIG, dnsServers: "off" },
    logger: { ...silentLogger, error: (message, fields) => logged.push({ message, fields }) },
  });
  let caught: unknown;
  try {
    await ck.certificates.list().catch((error: unknown) => (caught = error));
  } finally {
    await ck.close();
  }
  expect(caught).toBeInstanceOf(CertkeeperApiError);
  expect((caught as Error).message).toContain("the request id identifies it in the logs");
  expect(logged.map((line) => line.message)).toEqual(["embedded call failed"]);

  const loggedId = logged[0]!.fields?.requestId;
  // The id, wherever the error carries it (a property, or its message).
  const errorText = JSON.stringify({ ...(caught as object), message: (caught as Error).message });
  expect({ loggedId, inError: typeof loggedId === "string" && errorText.includes(loggedId) }).toEqual({
    loggedId: expect.stringMatching(/^req_[0-9A-Za-z]{16,}$/),
    inError: true,
  });
});
