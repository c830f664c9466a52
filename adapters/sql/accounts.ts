/** Organizations, users, API keys and rate-limit windows in SQL. */
import { DuplicateError, LastOwnerError, RoleChangedError, type ApiKeyStore, type OrganizationStore, type RateLimitStore, type ScopeUsage, type UserStore } from "../../core/store/mod.ts";
import type { Mode } from "../../core/base/mod.ts";
import { ConstraintError, type Executor } from "./executor.ts";
import { apiKeyFrom, organizationFrom, userFrom } from "./rows.ts";

const ORG_COLUMNS = ["id", "name", "plan", "certificate_limit", "channel_limit", "rate_limit", "watch_limit", "created_at"];
const USER_COLUMNS = ["id", "organization_id", "email", "role", "password_hash", "created_at"];
const KEY_COLUMNS = ["id", "user_id", "organization_id", "name", "mode", "hash", "last4", "created_at", "last_used_at", "revoked_at"];

/** `t.a AS t_a, t.b AS t_b`: joined tables' columns under distinct names. */
function aliased(table: string, columns: string[]): string {
  return columns.map((column) => `${table}.${column} AS ${table}_${column}`).join(", ");
}

async function insertUnique(db: Executor, sql: string, args: Parameters<Executor["execute"]>[1], what: string) {
  try {
    await db.execute(sql, args);
  } catch (error) {
    if (error instanceof ConstraintError) throw new DuplicateError(what);
    throw error;
  }
}

export function sqlOrganizations(db: Executor): OrganizationStore {
  return {
    async create(org) {
      await db.execute(
        `INSERT INTO organizations (${ORG_COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [org.id, org.name, org.plan, org.limits.certificates, org.limits.channels, org.limits.requestsPerMinute, org.limits.watches, org.createdAt],
      );
    },
    async get(id) {
      const { rows } = await db.execute(`SELECT ${ORG_COLUMNS.join(", ")} FROM organizations WHERE id = ?`, [id]);
      return rows[0] ? organizationFrom(rows[0]) : null;
    },
    async list() {
      const { rows } = await db.execute(`SELECT ${ORG_COLUMNS.join(", ")} FROM organizations ORDER BY created_at, id`);
      return rows.map((row) => organizationFrom(row));
    },
    async update(id, patch) {
      const { rows } = await db.execute(
        `UPDATE organizations SET name = COALESCE(?, name), plan = COALESCE(?, plan), certificate_limit = COALESCE(?, certificate_limit),
           channel_limit = COALESCE(?, channel_limit), rate_limit = COALESCE(?, rate_limit), watch_limit = COALESCE(?, watch_limit)
         WHERE id = ? RETURNING ${ORG_COLUMNS.join(", ")}`,
        [
          patch.name ?? null,
          patch.plan ?? null,
          patch.limits?.certificates ?? null,
          patch.limits?.channels ?? null,
          patch.limits?.requestsPerMinute ?? null,
          patch.limits?.watches ?? null,
          id,
        ],
      );
      return rows[0] ? organizationFrom(rows[0]) : null;
    },
    async usage(id) {
      const { rows } = await db.execute(
        `SELECT 'certificates' AS kind, mode, COUNT(*) AS n FROM certificates WHERE organization_id = ? GROUP BY mode
         UNION ALL SELECT 'channels', mode, COUNT(*) FROM channels WHERE organization_id = ? GROUP BY mode
         UNION ALL SELECT 'watches', mode, COUNT(*) FROM watches WHERE organization_id = ? GROUP BY mode`,
        [id, id, id],
      );
      const usage: Record<Mode, ScopeUsage> = {
        live: { certificates: 0, channels: 0, watches: 0 },
        test: { certificates: 0, channels: 0, watches: 0 },
      };
      for (const row of rows) {
        const mode = String(row.mode) as Mode;
        if (mode in usage) usage[mode][String(row.kind) as keyof ScopeUsage] = Number(row.n);
      }
      return usage;
    },
  };
}

export function sqlUsers(db: Executor): UserStore {
  const select = `SELECT ${USER_COLUMNS.join(", ")} FROM users`;
  return {
    async create(user) {
      await insertUnique(
        db,
        `INSERT INTO users (${USER_COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?, ?)`,
        [user.id, user.organizationId, user.email, user.role, user.passwordHash, user.createdAt],
        `A user with email ${user.email}`,
      );
    },
    async get(id) {
      const { rows } = await db.execute(`${select} WHERE id = ?`, [id]);
      return rows[0] ? userFrom(rows[0]) : null;
    },
    async findByEmail(email) {
      const { rows } = await db.execute(`${select} WHERE email = ?`, [email.toLowerCase()]);
      return rows[0] ? userFrom(rows[0]) : null;
    },
    async list(organizationId) {
      const { rows } = await db.execute(`${select} WHERE organization_id = ? ORDER BY created_at, id`, [organizationId]);
      return rows.map((row) => userFrom(row));
    },
    async update(id, patch, options = {}) {
      const role = patch.role ?? null;
      const whenRole = options.whenRole ?? null;
      // The guards are read in the same statement that writes: no race with another demotion or role change.
      const { rows } = await db.execute(
        `UPDATE users SET role = COALESCE(?, role), password_hash = COALESCE(?, password_hash)
         WHERE id = ? AND (? IS NULL OR role = ?) AND NOT (? AND role = 'owner' AND COALESCE(?, role) <> 'owner'
           AND (SELECT COUNT(*) FROM users AS o WHERE o.organization_id = users.organization_id AND o.role = 'owner') <= 1)
         RETURNING ${USER_COLUMNS.join(", ")}`,
        [role, patch.passwordHash ?? null, id, whenRole, whenRole, options.keepOwner ? 1 : 0, role],
      );
      if (rows[0]) return userFrom(rows[0]);
      if (!options.keepOwner && whenRole === null) return null;
      const { rows: found } = await db.execute("SELECT role FROM users WHERE id = ?", [id]);
      if (found.length === 0) return null;
      if (whenRole !== null && found[0]!.role !== whenRole) throw new RoleChangedError();
      throw new LastOwnerError();
    },
    async remove(id, at, options = {}) {
      return db.transaction(async (tx) => {
        if (options.keepOwner || options.whenRole) {
          const { rows } = await tx.execute(
            `SELECT u.role, (SELECT COUNT(*) FROM users AS o WHERE o.organization_id = u.organization_id AND o.role = 'owner') AS owners
             FROM users AS u WHERE u.id = ?`,
            [id],
          );
          if (rows[0] && options.whenRole && rows[0].role !== options.whenRole) throw new RoleChangedError();
          if (options.keepOwner && rows[0] && rows[0].role === "owner" && Number(rows[0].owners) <= 1) throw new LastOwnerError();
        }
        await tx.execute("UPDATE api_keys SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [at, id]);
        const { rowsAffected } = await tx.execute("DELETE FROM users WHERE id = ?", [id]);
        return rowsAffected > 0;
      });
    },
  };
}

export function sqlApiKeys(db: Executor): ApiKeyStore {
  const select = `SELECT ${KEY_COLUMNS.join(", ")} FROM api_keys`;
  return {
    async create(key) {
      await insertUnique(
        db,
        `INSERT INTO api_keys (${KEY_COLUMNS.join(", ")}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [key.id, key.userId, key.organizationId, key.name, key.mode, key.hash, key.last4, key.createdAt, key.lastUsedAt, key.revokedAt],
        "An API key with this hash",
      );
    },
    async get(id) {
      const { rows } = await db.execute(`${select} WHERE id = ?`, [id]);
      return rows[0] ? apiKeyFrom(rows[0]) : null;
    },
    async revoke(id, at) {
      const { rows } = await db.execute(
        `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING ${KEY_COLUMNS.join(", ")}`,
        [at, id],
      );
      return rows[0] ? apiKeyFrom(rows[0]) : null;
    },
    async list(organizationId) {
      const { rows } = await db.execute(`${select} WHERE organization_id = ? ORDER BY created_at DESC, id DESC`, [organizationId]);
      return rows.map((row) => apiKeyFrom(row));
    },
    async findByHash(hash) {
      const { rows } = await db.execute(
        `SELECT ${aliased("k", KEY_COLUMNS)}, ${aliased("u", USER_COLUMNS)}, ${aliased("o", ORG_COLUMNS)}
         FROM api_keys k JOIN organizations o ON o.id = k.organization_id LEFT JOIN users u ON u.id = k.user_id
         WHERE k.hash = ?`,
        [hash],
      );
      const row = rows[0];
      if (!row) return null;
      return {
        key: apiKeyFrom(row, "k_"),
        user: row.u_id === null || row.u_id === undefined ? null : userFrom(row, "u_"),
        organization: organizationFrom(row, "o_"),
      };
    },
    async touch(uses) {
      if (uses.length === 0) return;
      await db.transaction(async (tx) => {
        for (const use of uses) {
          await tx.execute("UPDATE api_keys SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?", [use.at, use.id]);
        }
      });
    },
  };
}

export function sqlRateLimits(db: Executor): RateLimitStore {
  return {
    async hit(keyId, now, windowMs, aheadMs) {
      // One statement, so concurrent processes count into the same window atomically. SET expressions
      // all see the row as it was, so both CASEs agree on whether the window ran out.
      const { rows } = await db.execute(
        `INSERT INTO rate_limits (key_id, window_start, count) VALUES (?, ?, 1)
         ON CONFLICT (key_id) DO UPDATE SET
           count = CASE WHEN window_start + ? <= excluded.window_start OR window_start > excluded.window_start + ? THEN 1 ELSE count + 1 END,
           window_start = CASE WHEN window_start + ? <= excluded.window_start OR window_start > excluded.window_start + ? THEN excluded.window_start ELSE window_start END
         RETURNING count, window_start`,
        [keyId, now, windowMs, windowMs + aheadMs, windowMs, windowMs + aheadMs],
      );
      return { count: Number(rows[0]!.count), windowStart: Number(rows[0]!.window_start) };
    },
    async prune(before) {
      return (await db.execute("DELETE FROM rate_limits WHERE window_start < ?", [before])).rowsAffected;
    },
  };
}
