/**
 * A TLS server in a process of its own for the check benchmark: presents a leaf and its intermediate
 * from a freshly generated local PKI, prints `{ port, rootPem }` as one JSON line, serves until killed.
 */
import tls from "node:tls";
import { chainPem, createIntermediateCa, createLeaf, createRootCa } from "../../test/support/pki.ts";

const root = await createRootCa({ keyType: "ec" });
const intermediate = await createIntermediateCa(root, { keyType: "ec" });
const leaf = await createLeaf({ issuer: intermediate, keyType: "ec", dnsNames: ["*.bench.certkeeper.test"] });
const server = tls.createServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem }, (socket) => {
  socket.on("error", () => {});
  socket.end();
});
server.on("tlsClientError", () => {});
server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ port: (server.address() as { port: number }).port, rootPem: root.certPem }));
});
