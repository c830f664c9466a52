/**
 * The system's resolvers as /etc/resolv.conf names them (CONTRACT §22: CERTKEEPER_DNS_SERVERS defaults
 * to them): a `;` starts a comment as `#` does, on its own line or after an address, as the C library
 * reads the file (glibc cuts a nameserver's address at the first of ";# \t").
 */
import { describe, expect, test } from "bun:test";
import { parseResolvConf } from "../core/dns/mod.ts";

describe("resolv.conf comments", () => {
  test("a ; comment after an address, with or without a space, leaves the address", () => {
    expect(parseResolvConf("nameserver 192.0.2.1;primary\nnameserver 192.0.2.2 ; secondary\n")).toEqual([
      { address: "192.0.2.1", port: 53 },
      { address: "192.0.2.2", port: 53 },
    ]);
  });

  test("a line commented out with ; names no resolver", () => {
    expect(parseResolvConf(";nameserver 192.0.2.9\nnameserver 192.0.2.3\n")).toEqual([{ address: "192.0.2.3", port: 53 }]);
  });
});
