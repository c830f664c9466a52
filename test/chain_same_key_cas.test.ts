/**
 * The chain judgement every TLS check runs is bounded in the paths it tries: a server that sends nine
 * self-issued CA certificates, all named like the leaf's issuer and all signed by one key (every order
 * of them a valid chain of signatures, about 10^6 paths), is judged untrusted_issuer in well under 2 s.
 */
import "reflect-metadata";
import { expect, test } from "bun:test";
import * as x509 from "@peculiar/x509";
import { createRootCa, createLeaf, generateKeys } from "./support/pki.ts";
import { judgeChain } from "../core/tls/chain_verify.ts";
import { parseCertificates } from "../core/tls/certificate_parse.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

x509.cryptoProvider.set(globalThis.crypto);
const DAY = 86_400_000;

test("a chain of nine self-issued CAs sharing one key is judged in well under 2 s", async () => {
  const keys = await generateKeys("ec");
  const name = "CN=Hostile CA";
  const cas = [];
  for (let i = 0; i < 9; i++) {
    cas.push(
      await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: (0x10 + i).toString(16),
        name,
        notBefore: new Date(Date.now() - DAY),
        notAfter: new Date(Date.now() + 365 * DAY),
        keys,
        signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
        extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
      }),
    );
  }
  const leaf = await createLeaf({ dnsNames: ["hostile.test"], issuer: { cert: cas[0]!, keys, certPem: "", keyPem: "" } });
  const trust = new TrustStore([(await createRootCa()).certPem]);
  const certs = parseCertificates([leaf.cert, ...cas].map((cert) => new Uint8Array(cert.rawData)));
  const started = performance.now();
  const judged = await judgeChain(certs, "hostile.test", trust, Date.now());
  const elapsed = performance.now() - started;
  expect(judged.problem).toBe("untrusted_issuer");
  expect(elapsed).toBeLessThan(2000);
}, 600_000);
