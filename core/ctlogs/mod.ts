/**
 * core/ctlogs: following the Certificate Transparency logs directly (CONTRACT §21): RFC 6962 and
 * static-ct-api tile logs, every head and every run of entries verified, every entry's names matched
 * against every watch through an index, positions kept in the database.
 */
export { CtFollower, type CtFollowerOptions } from "./follower.ts";
export { RecordedIssuances } from "./recorded_issuances.ts";
export { parseLogList, LogListError, type LogList, type LogSpec, type LogKind } from "./log_list.ts";
export { readCheckpoint, readSignedTreeHead, readLogKey, treeHeadInput, HeadError, type LogKey, type TreeHead } from "./tree_head.ts";
export { CompactRange, leafHash, nodeHash, subtreesCovering, verifyConsistency, verifyInclusion, EMPTY_ROOT } from "./merkle.ts";
export { readDataTile, readMerkleTreeLeaf, entryIdentity, EntryError, type LogEntry } from "./log_entry.ts";
export { issuanceKey, readTbs, certificateTbs, type TbsFields } from "./certificate_fields.ts";
export { tileIndexPath, tilePath, TILE_WIDTH } from "./tile_reader.ts";
export { WatchIndex } from "./watch_index.ts";
export { Rfc6962Reader } from "./rfc6962_reader.ts";
export { TileReader } from "./tile_reader.ts";
export type { LogReader } from "./log_reader.ts";
export {
  decodeChunk,
  LocalEntryReader,
  namesWatched,
  type Candidate,
  type DecodedChunk,
  type DecodeRequest,
  type EntryFetch,
  type EntryReader,
  type WatchDomains,
} from "./entry_decode.ts";
export { LogFailure, type LogHttp } from "./_log_http.ts";
