/**
 * Where in its interval a certificate's re-checks fall. Each certificate keeps a phase of its own, from
 * its id: its next check is the last moment of its phase within one interval of this check, never
 * later. Certificates added or imported together (checked in the same second) spread over the whole
 * interval from their second check on, instead of coming due together for ever; after that, each is
 * checked exactly one interval after the last (Prometheus spreads its scrapes the same way).
 */

/**
 * Phases fall on whole tenths of a second: certificates due in the same tenth are leased and saved
 * together (one lease and one save for several), and a tenth's worth of checks is no wave. bench:load
 * (500 certificates every 10 s), two runs each: the probe's p99 4.9–6.2 ms with phases to the
 * millisecond and CPU 55–56 %, 5.0–5.5 ms and 51–52 % in tenths, 13–17 ms and 49–50 % in whole seconds.
 */
const PHASE_STEP_MS = 100;

/** The last moment in (now, now + periodMs] that lies on the phase of `id` for `periodMs`. */
export function nextOnPhase(id: string, now: number, periodMs: number): number {
  if (!(periodMs > 1) || !Number.isFinite(periodMs)) return now + Math.max(periodMs, 0);
  const slots = Math.floor(periodMs / PHASE_STEP_MS);
  const phase = slots > 1 ? (phaseOf(id) % slots) * PHASE_STEP_MS : phaseOf(id) % periodMs;
  const end = now + periodMs;
  // (end - phase) mod periodMs is in [0, periodMs): the result is in (now, end].
  return end - mod(end - phase, periodMs);
}

function mod(value: number, divisor: number): number {
  const rest = value % divisor;
  return rest < 0 ? rest + divisor : rest;
}

/** FNV-1a over the id's UTF-16 code units: stable across processes and releases. */
function phaseOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The regular check, moved to `askAt` (when the CA's renewal information may be asked again, RFC 9773's
 * Retry-After counted from its answer) when that comes a little after the phase, within `periodMs` of
 * this check. Without it, a Retry-After equal to the interval (6 hours, both defaults) falls just after
 * every phase (by the time the answer took to come) and the CA is asked every other check. The moves
 * add up over the rounds by a check's duration, at most SLACK of them in all: once past, the CA is asked
 * one check later, and the check is back on its phase.
 */
export function regularCheckAt(id: string, now: number, periodMs: number, askAt: number | undefined): number {
  const onPhase = nextOnPhase(id, now, periodMs);
  if (askAt === undefined || !(askAt > onPhase)) return onPhase;
  // On a tenth of a second, as phases are, so that it is leased and saved with the others due then.
  const moved = Math.ceil(askAt / PHASE_STEP_MS) * PHASE_STEP_MS;
  if (moved > now + periodMs) return onPhase;
  return moved - onPhase <= Math.min(periodMs * SLACK_SHARE, SLACK_MAX_MS) ? moved : onPhase;
}

const SLACK_SHARE = 0.02;
const SLACK_MAX_MS = 2 * 60 * 1000;
