/** Browser sessions and failed sign-ins in SQL. */
import type { SessionStore, SignInAttemptStore } from "../../core/store/mod.ts";
import type { SessionRecord, SignInFailures } from "../../core/base/mod.ts";
import type { Executor, Row } from "./executor.ts";

const SESSION_COLUMNS = ["id", "user_id", "organization_id", "created_at", "last_seen_at", "expires_at"];

function sessionFrom(row: Row): SessionRecord {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    organizationId: String(row.organization_id),
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
    expiresAt: Number(row.expires_at),
  };
}

function failuresFrom(row: Row): SignInFailures {
  return { failures: Number(row.failures), lastFailureAt: Number(row.last_failure_at) };
}

export function sqlSessions(db: Executor): SessionStore {
  return {
    async create(session) {
      await db.execute(`INSERT INTO sessions (${SESSION_COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?, ?)`, [
        session.id,
        session.userId,
        session.organizationId,
        session.createdAt,
        session.lastSeenAt,
        session.expiresAt,
      ]);
    },
    async get(id) {
      const { rows } = await db.execute(`SELECT ${SESSION_COLUMNS.join(", ")} FROM sessions WHERE id = ?`, [id]);
      return rows[0] ? sessionFrom(rows[0]) : null;
    },
    async touch(id, { lastSeenAt, expiresAt }) {
      const { rowsAffected } = await db.execute("UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?", [
        lastSeenAt,
        expiresAt,
        id,
      ]);
      return rowsAffected > 0;
    },
    async remove(id) {
      return (await db.execute("DELETE FROM sessions WHERE id = ?", [id])).rowsAffected > 0;
    },
    async removeByUser(userId) {
      return (await db.execute("DELETE FROM sessions WHERE user_id = ?", [userId])).rowsAffected;
    },
    async removeExpired(now) {
      return (await db.execute("DELETE FROM sessions WHERE expires_at <= ?", [now])).rowsAffected;
    },
  };
}

export function sqlSignInAttempts(db: Executor): SignInAttemptStore {
  return {
    async fail(key, { now, windowMs }) {
      // One statement, so failures counted by several processes at once all count.
      const { rows } = await db.execute(
        `INSERT INTO sign_in_attempts (key, failures, last_failure_at) VALUES (?, 1, ?)
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN last_failure_at + ? <= excluded.last_failure_at THEN 1 ELSE failures + 1 END,
           last_failure_at = MAX(last_failure_at, excluded.last_failure_at)
         RETURNING failures, last_failure_at`,
        [key, now, windowMs],
      );
      return failuresFrom(rows[0]!);
    },
    async get(key) {
      const { rows } = await db.execute("SELECT failures, last_failure_at FROM sign_in_attempts WHERE key = ?", [key]);
      return rows[0] ? failuresFrom(rows[0]) : null;
    },
    async clear(key) {
      await db.execute("DELETE FROM sign_in_attempts WHERE key = ?", [key]);
    },
    async prune(before) {
      return (await db.execute("DELETE FROM sign_in_attempts WHERE last_failure_at < ?", [before])).rowsAffected;
    },
  };
}
