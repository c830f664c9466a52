/**
 * The thread that owns a local database's connection (local_executor.ts). Every statement of the
 * process runs here, one after another in the order they were sent, so SQLite's work never runs on
 * the event loop that completes handshakes and answers requests. That work includes reading pages,
 * building rows, writing the WAL at each commit, and waiting out another process's write lock.
 *
 * Requests are `[id, OP_RUN, sql, args, quiet]`, `[id, OP_BATCH, statements, quiet]`, `[id, OP_ROLLBACK,
 * quiet]` or `[id, OP_CLOSE]` (connection_protocol.ts), several to a message; each answer is `[id, outcome,
 * error]`, with rows as arrays and their columns named once, one message of answers per message of
 * requests. A transaction's statements come on a channel of their own, answered
 * the same way, while their caller waits for each (StatementChannel).
 */
import { parentPort, workerData } from "node:worker_threads";
import { openConnection } from "./connection.ts";
import { isQuiet, OP_CLOSE, OP_ROLLBACK, OP_RUN, type Answer, type Request, type StatementChannel } from "./connection_protocol.ts";
import { ownWritesPublisher } from "./wal_token.ts";

const { path, busyTimeoutMs, ownWrites } = workerData as { path: string; busyTimeoutMs: number; ownWrites?: Int32Array };
const connection = openConnection(path, busyTimeoutMs);
// Before each answer: the WAL index header as this connection's commits left it (see wal_token.ts).
// Its descriptor stays open until the connection has closed, as the event loop's does.
const publisher = ownWrites ? ownWritesPublisher(path, ownWrites, () => connection.dataVersion()) : undefined;

function handle(request: Request): Answer {
  if (request[1] === OP_CLOSE) {
    const answer = connection.handle(request);
    publisher?.close();
    return answer;
  }
  // A commit that is not quiet leaves no header this process's commits explain: the token moves for it.
  if (publisher && !isQuiet(request)) return publisher.watch(() => connection.handle(request));
  if (publisher) return publisher.quiet((locked) => connection.handle(request, locked));
  return connection.handle(request);
}

parentPort!.on("message", (requests: Request[] | StatementChannel) => {
  if (!Array.isArray(requests)) {
    // The transaction's statements: answered on their own port, the flag raised once the answer is there.
    const { port, answered } = requests;
    port.on("message", (statement: Request) => {
      const answer = handle(statement);
      // Only a transaction's end moves the header (the statements before it are waited for, blocking);
      // a quiet one was published as it ended.
      const ends = statement[1] === OP_ROLLBACK || (statement[1] === OP_RUN && statement[2] === "COMMIT");
      if (ends && !isQuiet(statement)) publisher?.publish();
      port.postMessage(answer);
      Atomics.store(answered, 0, 1);
      Atomics.notify(answered, 0);
    });
    return;
  }
  // The requests of one of the caller's turns, answered together; published after them unless each
  // was quiet (each of those was published as it ended).
  const answers = requests.map(handle);
  if (!requests.every(isQuiet)) publisher?.publish();
  parentPort!.postMessage(answers);
});
