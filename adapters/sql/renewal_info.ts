/** What CAs said in their renewal information (RFC 9773), by certID, shared by every process. */
import type { RenewalInfoCache } from "../../core/store/mod.ts";
import type { RenewalInfo } from "../../core/base/mod.ts";
import type { Executor } from "./executor.ts";

export function sqlRenewalInfo(db: Executor): RenewalInfoCache {
  let puts = 0;
  return {
    async get(certId) {
      const { rows } = await db.execute("SELECT info FROM renewal_info WHERE cert_id = ?", [certId]);
      return rows[0] ? (JSON.parse(String(rows[0].info)) as RenewalInfo) : null;
    },
    async put(certId, info, expiresAt, now) {
      await db.execute(
        `INSERT INTO renewal_info (cert_id, info, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (cert_id) DO UPDATE SET info = excluded.info, expires_at = excluded.expires_at`,
        [certId, JSON.stringify(info), expiresAt],
      );
      // Nobody asks about an expired leaf again: sweep those now and then.
      if (++puts % 256 === 0) {
        await db.execute("DELETE FROM renewal_info WHERE expires_at < ?", [now]);
        await db.execute("DELETE FROM renewal_info_claims WHERE until <= ?", [now]);
      }
    },
    async claim(certId, owner, now, until, latest) {
      const { rowsAffected } = await db.execute(
        `INSERT INTO renewal_info_claims (cert_id, owner, until) VALUES (?, ?, ?)
         ON CONFLICT (cert_id) DO UPDATE SET owner = excluded.owner, until = excluded.until
         WHERE renewal_info_claims.owner = excluded.owner OR renewal_info_claims.until <= ? OR renewal_info_claims.until > ?`,
        [certId, owner, until, now, latest],
      );
      return rowsAffected > 0;
    },
  };
}
