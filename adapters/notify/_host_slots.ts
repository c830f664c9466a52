/**
 * At most `limit` requests in flight to one origin (scheme, host, port) at a time; the others wait
 * their turn here, before their attempt's clock starts, instead of queueing inside the connection
 * pool while their time runs out unsent.
 */
export class HostSlots {
  readonly #limit: number;
  readonly #hosts = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves with a release function once a slot of `origin` is free. */
  async acquire(origin: string): Promise<() => void> {
    let host = this.#hosts.get(origin);
    if (!host) this.#hosts.set(origin, (host = { active: 0, waiting: [] }));
    if (host.active >= this.#limit) await new Promise<void>((resolve) => host.waiting.push(resolve));
    else host.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = host.waiting.shift();
      if (next) return next(); // the slot passes straight on
      host.active--;
      if (host.active === 0) this.#hosts.delete(origin);
    };
  }
}
