/**
 * addressBlock() counts sign-in attempts by the block a client holds; text that is no address (what a
 * proxy may forward: a name, "unknown") is one block whatever its letters' case, so a client cannot
 * start afresh by changing the case of what it sends.
 */
import { expect, test } from "bun:test";
import { addressBlock } from "../core/net/address_block.ts";

test("text that is no address is one block whatever its case", () => {
  expect(addressBlock("Client.Example")).toBe("client.example");
  expect(addressBlock("UNKNOWN")).toBe(addressBlock("unknown"));
  expect(addressBlock("2001:DB8:1:2::1")).toBe(addressBlock("2001:db8:1:2::1"));
});
