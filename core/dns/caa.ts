/**
 * CAA (RFC 8659): the record set relevant to a name, found by climbing the tree, and whether it lets
 * the CA that issued the served leaf issue its next certificate. The judgement is pure; the lookups
 * go through the DnsClient.
 */
import { createHash } from "node:crypto";
import type * as dnsPacket from "dns-packet";
import type { CaaBlocking, CaaRecord, CaaVerdict } from "../base/records.ts";
import type { CaaIdentity } from "../config/dns_settings.ts";
import type { Deadline } from "../net/deadline.ts";
import { canonical, type DnsClient } from "./dns_client.ts";

/** Issuer names of the CAs CONTRACT §22 knows, with the organization names they put in their certificates. */
export const BUILT_IN_CAA_IDENTITIES: readonly CaaIdentity[] = [
  { name: "Let's Encrypt", domain: "letsencrypt.org" },
  { name: "Google Trust Services", domain: "pki.goog" },
  { name: "Google Trust Services LLC", domain: "pki.goog" },
  { name: "ZeroSSL", domain: "sectigo.com" },
  { name: "DigiCert", domain: "digicert.com" },
  { name: "DigiCert Inc", domain: "digicert.com" },
  { name: "DigiCert, Inc.", domain: "digicert.com" },
  { name: "Sectigo", domain: "sectigo.com" },
  { name: "Sectigo Limited", domain: "sectigo.com" },
];

/**
 * The other issuer domain names a built-in CA honours as its own in `issue` and `issuewild` (their CAA
 * documentation: DigiCert's brands since it took Symantec's, Sectigo's since Comodo's): a record naming
 * any of them lets the CA issue, and certkeeper warns on none of them.
 */
const HONOURED_ALIKE: ReadonlyMap<string, readonly string[]> = new Map([
  ["digicert.com", ["www.digicert.com", "symantec.com", "thawte.com", "geotrust.com", "rapidssl.com"]],
  ["sectigo.com", ["comodoca.com", "comodo.com", "usertrust.com", "trust-provider.com"]],
]);

/** Property tags a CA knows (RFC 8659 §4, and the CA/Browser Forum's contact tags): a critical one of any other tag forbids issuance. */
const KNOWN_TAGS = new Set(["issue", "issuewild", "iodef", "contactemail", "contactphone", "issuemail"]);

/** A stored value is cut here: no issuer domain name with its parameters comes near it. */
const MAX_VALUE_LENGTH = 1024;

/** The relevant record set of one climb: `from` is where it started, `setAt` where records were found (null: none on the way). */
export interface CaaSet {
  from: string;
  setAt: string | null;
  records: CaaRecord[];
}

/** A name the next renewal asks the CA for, and where its CAA climb starts. */
interface Judged {
  /** The domain, or `*.<base>`. */
  name: string;
  from: string;
  wildcard: boolean;
}

/**
 * The names CAA is judged for: the domain itself when a SAN names it exactly (or none covers it);
 * `*.<base>` when a wildcard SAN covers it, whose climb starts at the base (RFC 8659 §3); and
 * `*.<domain>` when the certificate also names the wildcard below the domain (the usual
 * `example.com` + `*.example.com`, checked under its apex): its renewal asks for that wildcard too,
 * judged by `issuewild` on the domain's own relevant set.
 */
function judgedNames(domain: string, subjectAlternativeNames: readonly string[]): Judged[] {
  const names = subjectAlternativeNames.map(canonical);
  const dot = domain.indexOf(".");
  const base = dot > 0 ? domain.slice(dot + 1) : null;
  const wildcard = base !== null && base.includes(".") && names.includes(`*.${base}`);
  const exact = names.includes(domain);
  const judged: Judged[] = [];
  if (exact || !wildcard) judged.push({ name: domain, from: domain, wildcard: false });
  if (wildcard) judged.push({ name: `*.${base}`, from: base!, wildcard: true });
  // The apex beside its wildcard (`example.com` and `*.example.com`, checked at www.example.com): the
  // renewal asks for both, and `issue` alone speaks for the apex (RFC 8659 §4.3). Its set is the one
  // the wildcard's climb reads first.
  if (wildcard && names.includes(base!)) judged.push({ name: base!, from: base!, wildcard: false });
  if (domain.includes(".") && names.includes(`*.${domain}`)) judged.push({ name: `*.${domain}`, from: domain, wildcard: true });
  return judged;
}

/** Where the climbs for a leaf with these SANs start: the relevant sets a verdict needs. */
export function caaClimbStarts(domain: string, subjectAlternativeNames: readonly string[]): string[] {
  return judgedNames(domain, subjectAlternativeNames).map((judged) => judged.from);
}

/** CAA(X) answers of one check, shared by its climbs (a wildcard's climb runs over the domain's). */
export type CaaMemo = Map<string, Promise<{ owner: string; records: CaaRecord[] }>>;

/**
 * RelevantCAASet(from) of RFC 8659 §3: the CAA records of `from` (CNAMEs followed, as the resolver
 * does), else of its parent, and so on up to the top-level domain; empty when none on the way has any.
 * `setAt` is where the records are: the end of an alias's chain. An alias whose target has none climbs
 * on from the alias's own parent. Throws DnsFailure when a step fails: an unanswered step could have
 * been the relevant one.
 */
export async function relevantCaaSet(client: DnsClient, from: string, limit: Deadline, memo: CaaMemo = new Map()): Promise<CaaSet> {
  for (let name = canonical(from); name !== ""; name = name.includes(".") ? name.slice(name.indexOf(".") + 1) : "") {
    let answer = memo.get(name);
    if (!answer) {
      answer = client.lookup<dnsPacket.CaaData>(name, "CAA", limit).then(({ owner, records }) => ({ owner, records: records.map(caaRecord) }));
      memo.set(name, answer);
    }
    const { owner, records } = await answer;
    if (records.length > 0) return { from, setAt: owner, records };
  }
  return { from, setAt: null, records: [] };
}

function caaRecord(data: dnsPacket.CaaData): CaaRecord {
  const value = String(data.value ?? "");
  return {
    flags: Number(data.flags ?? 0) & 0xff,
    tag: String(data.tag ?? "").toLowerCase(),
    value: value.length > MAX_VALUE_LENGTH ? value.slice(0, MAX_VALUE_LENGTH) : value,
  };
}

/**
 * `0 issue "letsencrypt.org"`: a record as zone files and dig show it. The value is the domain's DNS
 * operator's to write (any octets), and it is shown to operators (events, notifications, the console):
 * only printable ASCII is shown as itself, every other octet as `\DDD` (RFC 1035 §5.1), as dig does,
 * so that no line break, terminal escape or bidi override of theirs acts.
 */
export function presentCaaRecord(record: CaaRecord): string {
  return `${record.flags} ${zoneText(record.tag)} "${zoneText(record.value)}"`;
}

/** Printable ASCII but `"` and `\`: shown as itself. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `text` as a zone file's quoted string holds it: `"` and `\` escaped, printable ASCII as itself, any other octet of its UTF-8 as `\DDD`. */
function zoneText(text: string): string {
  if (PLAIN_TEXT.test(text)) return text;
  let shown = "";
  for (const octet of new TextEncoder().encode(text)) {
    if (octet === 0x22 || octet === 0x5c) shown += `\\${String.fromCharCode(octet)}`;
    else if (octet >= 0x20 && octet < 0x7f) shown += String.fromCharCode(octet);
    else shown += `\\${String(octet).padStart(3, "0")}`;
  }
  return shown;
}

/** The CAA domain the issuer maps to: configured pairs first, then the built-in ones; null when none names it. */
export function issuerCaaDomain(issuerNames: readonly string[], identities: readonly CaaIdentity[]): string | null {
  const names = new Set(issuerNames.map((name) => name.toLowerCase()));
  return identities.find((identity) => names.has(identity.name.toLowerCase()))?.domain ?? null;
}

/**
 * Every issuer domain name that lets the issuer's CA issue: the domain of each pair naming the issuer
 * (a CA with several CAA domains is configured with a pair for each, beside the built-in one), and the
 * names a built-in CA honours alike.
 */
export function issuerCaaDomains(issuerNames: readonly string[], identities: readonly CaaIdentity[]): Set<string> {
  const names = new Set(issuerNames.map((name) => name.toLowerCase()));
  const domains = new Set<string>();
  for (const identity of identities) {
    if (!names.has(identity.name.toLowerCase())) continue;
    const domain = identity.domain.toLowerCase();
    domains.add(domain);
    for (const alike of HONOURED_ALIKE.get(domain) ?? []) domains.add(alike);
  }
  return domains;
}

/**
 * The issuer names (lower-cased) of the CA whose CAA domains are `accepted`, as the configured and
 * built-in pairs name it: every name sharing one of those domains (a configured pair adds a domain to
 * a name, it does not make the name another CA's), kept only when `forbidden` holds of its own domains
 * too (a pair may let one of the CA's names issue under a record that forbids the others).
 */
function issuerNamesOf(accepted: ReadonlySet<string>, identities: readonly CaaIdentity[], forbidden: (domains: ReadonlySet<string>) => boolean): string[] {
  const names: string[] = [];
  for (const identity of identities) {
    const name = identity.name.toLowerCase();
    if (names.includes(name)) continue;
    const domains = issuerCaaDomains([name], identities);
    if ([...domains].some((domain) => accepted.has(domain)) && forbidden(domains)) names.push(name);
  }
  return names;
}

/** RFC 8659 §4.2's issue-value, whole: WSP is space and tab only; each parameter is tag=value. */
const LABEL = "[A-Za-z0-9](?:-*[A-Za-z0-9])*";
const WSP = "[ \\t]*";
const PARAMETER = `${LABEL}${WSP}=${WSP}[\\x21-\\x3a\\x3c-\\x7e]*`;
const ISSUE_VALUE = new RegExp(`^${WSP}(?:(${LABEL}(?:\\.${LABEL})*)${WSP})?(?:;${WSP}(?:${PARAMETER}(?:${WSP};${WSP}${PARAMETER})*${WSP})?)?$`);

/**
 * The issuer domain name an `issue`/`issuewild` value names (RFC 8659 §4.2), lower-cased; null for an
 * empty one (`;`: no CA may issue) or a value outside the grammar, which the RFC says is to be
 * treated as an empty one (its example: `"%%%%%"` forbids issuance; so does a parameter that is no
 * tag=value, or white space other than space and tab). The parameters' values (accounturi,
 * validationmethods) are not judged: certkeeper cannot know how the renewal is made.
 */
export function issuerDomainOf(value: string): string | null {
  const name = ISSUE_VALUE.exec(value)?.[1];
  return name === undefined ? null : name.toLowerCase();
}

export interface CaaJudgementInput {
  domain: string;
  subjectAlternativeNames: readonly string[];
  /** The issuer's names to map (its O and CN). */
  issuerNames: readonly string[];
  identities: readonly CaaIdentity[];
  /** The relevant sets by the name their climb started from. */
  sets: ReadonlyMap<string, CaaSet>;
}

/**
 * Whether the relevant record sets let the leaf's CA issue its next certificate (RFC 8659 §4):
 * `issue` values for the name, `issuewild` ones (else `issue`) for a wildcard; a critical property of
 * a tag no CA knows forbids every CA. An issuer with no known CAA domain is not judged. Throws when a
 * needed set is missing from `sets`.
 */
export function judgeCaa(input: CaaJudgementInput): CaaVerdict {
  const issuerDomain = issuerCaaDomain(input.issuerNames, input.identities);
  if (issuerDomain === null) return { status: "not_judged", issuerDomain: null, blocking: null };
  const accepted = issuerCaaDomains(input.issuerNames, input.identities);
  let anyRecords = false;
  for (const judged of judgedNames(input.domain, input.subjectAlternativeNames)) {
    const set = input.sets.get(judged.from);
    if (!set) throw new Error(`no CAA record set was looked up for ${judged.from}`);
    if (set.records.length === 0 || set.setAt === null) continue;
    anyRecords = true;
    const blocking = forbids(judged, set, accepted);
    if (blocking) {
      const issuers = issuerNamesOf(accepted, input.identities, (domains) => forbids(judged, set, domains) !== null);
      return { status: "forbidden", issuerDomain, blocking: { ...blocking, issuers } };
    }
  }
  return { status: anyRecords ? "permitted" : "no_records", issuerDomain, blocking: null };
}

function forbids(judged: Judged, set: CaaSet, accepted: ReadonlySet<string>): CaaBlocking | null {
  const wild = set.records.filter((record) => record.tag === "issuewild");
  const property: "issue" | "issuewild" = judged.wildcard && wild.length > 0 ? "issuewild" : "issue";
  const blocking = (reason: CaaBlocking["reason"]): CaaBlocking => ({
    name: judged.name,
    setAt: set.setAt!,
    property,
    reason,
    // Sorted: DNS gives a set's records in any order.
    records: set.records.map(presentCaaRecord).sort(),
    key: setKey(set),
  });
  if (set.records.some((record) => (record.flags & 0x80) !== 0 && !KNOWN_TAGS.has(record.tag))) return blocking("critical");
  const properties = property === "issuewild" ? wild : set.records.filter((record) => record.tag === "issue");
  // A set without the property restricts nothing (RFC 8659 §4.2, §4.3).
  if (properties.length === 0) return null;
  return properties.some((record) => accepted.has(issuerDomainOf(record.value) ?? "")) ? null : blocking("not_listed");
}

/** The set's place and records, order aside: the same set, however served, has the same key. */
function setKey(set: CaaSet): string {
  const text = [set.setAt ?? "", ...set.records.map(presentCaaRecord).sort()].join("\n");
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}
