import { describe, expect, test } from "bun:test";
import { generateApiKey, hashApiKey, parseApiKey } from "../core/auth/api_key.ts";

describe("API keys", () => {
  test("are ck_live_ or ck_test_ then 32 random base62 characters and a 6-character checksum", () => {
    const live = generateApiKey("live");
    const test_ = generateApiKey("test");
    expect(live.key).toMatch(/^ck_live_[0-9A-Za-z]{38}$/);
    expect(test_.key).toMatch(/^ck_test_[0-9A-Za-z]{38}$/);
    expect([parseApiKey(live.key), parseApiKey(test_.key)]).toEqual(["live", "test"]);
    expect(live.last4).toBe(live.key.slice(-4));
    expect(live.hash).toBe(hashApiKey(live.key));
    expect(live.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("are unique and spread over the whole alphabet", () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey("live").key.slice(8, 40));
    expect(new Set(keys).size).toBe(2000);
    const alphabet = new Set(keys.join(""));
    expect(alphabet.size).toBe(62);
  });

  test("a changed character, a wrong prefix or a wrong length fails the check without any lookup", () => {
    const { key } = generateApiKey("live");
    const flipped = key.slice(0, 20) + (key[20] === "a" ? "b" : "a") + key.slice(21);
    for (const bad of [flipped, key.replace("ck_live_", "ck_test_"), key.slice(0, -1), `${key}x`, key.toLowerCase() === key ? key.toUpperCase() : key.toLowerCase(), ""]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });
});
