/**
 * A TLS server in a process of its own for the check benchmark: presents a leaf and its intermediate
 * from a freshly generated local PKI, the leaf naming an OCSP responder served here too (answering
 * `good`, signed by the intermediate, valid a day), on 127.0.0.1 to 127.0.0.4 (one port: four nodes behind
 * a name). Prints `{ port, rootPem, ocspUrl }` as one JSON line,
 * serves until killed; each OCSP request is reported on stderr as one line `ocsp`.
 * `--days-left N`: the leaf expires N days from now (default 90), so that a certificate added for it
 * lies within an alert threshold (the delivery benchmark raises an alert that way).
 */
import http from "node:http";
import tls from "node:tls";
import { parseArgs } from "node:util";
import { chainPem, createIntermediateCa, createLeaf, createRootCa } from "../../test/support/pki.ts";
import { ocspAnswer } from "../../test/support/revocation.ts";

const { values } = parseArgs({ options: { "days-left": { type: "string", default: "90" } } });
const root = await createRootCa({ keyType: "ec" });
const intermediate = await createIntermediateCa(root, { keyType: "ec" });
const responder = http.createServer();
await new Promise<void>((resolve) => responder.listen(0, "127.0.0.1", resolve));
const ocspUrl = `http://127.0.0.1:${(responder.address() as { port: number }).port}/ocsp`;
const leaf = await createLeaf({ issuer: intermediate, keyType: "ec", dnsNames: ["*.bench.certkeeper.test"], ocspUrls: [ocspUrl], daysLeft: Number(values["days-left"]) });
const answer = ocspAnswer({ leaf, issuer: intermediate, status: { good: true }, nextUpdate: new Date(Date.now() + 86_400_000) });
responder.on("request", (req, res) => {
  req.resume();
  req.on("end", () => {
    process.stderr.write("ocsp\n");
    res.writeHead(200, { "content-type": "application/ocsp-response", "content-length": String(answer.length) });
    res.end(answer);
  });
});
function node(host: string, port: number): Promise<number> {
  const server = tls.createServer({ cert: chainPem(leaf, intermediate), key: leaf.keyPem }, (socket) => {
    socket.on("error", () => {});
    socket.end();
  });
  server.on("tlsClientError", () => {});
  return new Promise((resolve) => server.listen(port, host, () => resolve((server.address() as { port: number }).port)));
}
const port = await node("127.0.0.1", 0);
for (const host of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) await node(host, port);
console.log(JSON.stringify({ port, rootPem: root.certPem, ocspUrl }));
