/** A bare executor over one `@libsql/client` client, as migration tests need it (no queueing, no change counting). */
import type { Client } from "@libsql/client";
import { insideTransaction, type Executor, type ResultSet, type SqlValue } from "../../adapters/sql/mod.ts";

export function executorOver(client: Client): Executor {
  const run = async (target: Pick<Client, "execute">, sql: string, args: SqlValue[] = []) =>
    (await target.execute({ sql, args })) as unknown as ResultSet;
  const executor: Executor = {
    execute: (sql, args) => run(client, sql, args),
    // The statements one by one in a transaction: what a batch does, in as many requests.
    batch: (statements) =>
      executor.transaction(async (tx) => {
        const results: ResultSet[] = [];
        for (const { sql, args } of statements) results.push(await tx.execute(sql, args));
        return results;
      }),
    async transaction(fn) {
      const tx = await client.transaction("write");
      try {
        const result = await fn(insideTransaction((sql, args) => run(tx, sql, args)));
        await tx.commit();
        return result;
      } finally {
        tx.close();
      }
    },
    close: async () => client.close(),
  };
  return executor;
}
